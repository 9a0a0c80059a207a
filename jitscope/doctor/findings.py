"""From a whole program's run to findings: each problem the run hit, where, what it cost, what to change.

Pure: a ``RunRecord`` in (``jitscope run``'s own record, with every compile's phases and the cache-key
components that changed), findings out. Nothing is measured twice: a finding's cost is the seconds
the run's watch measured for the compiles it explains. Its gain is estimated from the same figures
(and labelled so) until a change is applied and measured (``jitscope/doctor/measure.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

from jitscope.model.common import Location
from jitscope.model.doctor import (
    CACHE_DROPPED,
    EAGER_OPS,
    ESTIMATED,
    HOST_SYNC,
    JIT_IN_LOOP,
    NOT_ESTIMATED,
    RECOMPILE_DTYPE,
    RECOMPILE_OTHER,
    RECOMPILE_SHAPE,
    RECOMPILE_STATIC,
    RECOMPILE_STRUCTURE,
    RECOMPILE_WEAK_TYPE,
    SLOW_COMPILE,
    TRACE_EFFECT,
    UNTIMED,
    Finding,
    rank_key,
)
from jitscope.model.effects import EFFECT_ADVICE
from jitscope.model.run import JAX_INTERNAL, SYNC_REPEATS, USER, CompileEvent, RunRecord, SyncSite
from jitscope.units import fmt_duration, plural

#: A finding that cost less than this share of the run, or than ``MIN_COST_S``, is noise, not a problem.
FLOOR_SHARE, MIN_COST_S = 0.01, 0.05
#: Eager (op-by-op) compiles at a line of the user's code after that line's first run (a new shape each time
#: round a loop) before they are a pattern, not the start-up every program has (one call of a model's init
#: compiles many operations, once).
EAGER_REPEATS = 3
#: A first compile taking this share of the run is worth opening (``trace``'s compile-time section).
SLOW_COMPILE_SHARE = 0.25

_EVIDENCE = 3  # lines of evidence kept per finding


def noise_floor(wall_s: float) -> float:
    return max(MIN_COST_S, FLOOR_SHARE * wall_s)


def diagnose(record: RunRecord) -> tuple[list[Finding], int]:
    """The run's findings above the noise floor, ranked (timed ones by cost, then the rest), and how many
    fell below the floor."""
    floor = noise_floor(record.wall_s)
    found = [*_recompiles(record.events), *_eager(record.events), *_slow_compiles(record),
             *_syncs(record.syncs, floor), *_effects(record.events)]
    kept = [replace(f, cost_s=round(f.cost_s, 6), gain_s=round(f.gain_s, 6)) for f in found
            if f.kind in UNTIMED or f.cost_s >= floor or (f.kind == HOST_SYNC and f.gain == NOT_ESTIMATED)]
    kept.sort(key=rank_key)
    return kept, len(found) - len(kept)


# ------------------------------------------------------------------------------------ recompiles


def cause_kind(event: CompileEvent) -> str:
    """What made a recompile, as a finding kind: the first cache-key component that names it."""
    if event.same_key_as:
        return CACHE_DROPPED
    components = [c.component for c in event.causes]
    for component in components:
        if component == "function: object":
            return JIT_IN_LOOP
    for suffix, kind in (("(static): value", RECOMPILE_STATIC), ("(static): type", RECOMPILE_STATIC),
                         (": shape", RECOMPILE_SHAPE), (": dtype", RECOMPILE_DTYPE),
                         (": weak_type", RECOMPILE_WEAK_TYPE), ("pytree structure", RECOMPILE_STRUCTURE)):
        if any(c.endswith(suffix) for c in components):
            return kind
    return RECOMPILE_OTHER


def _recompiles(events: Sequence[CompileEvent]) -> Iterable[Finding]:
    groups: dict[tuple[str, Location | None, str], list[CompileEvent]] = defaultdict(list)
    seen: dict[tuple[str, Location | None], int] = defaultdict(int)
    for event in events:
        if event.kind != USER or not event.compiled:
            continue
        seen[(event.function, event.defined_at)] += 1
        if seen[(event.function, event.defined_at)] > 1:  # every compile after the function's first
            groups[(event.function, event.defined_at, cause_kind(event))].append(event)
    for (function, defined_at, kind), group in groups.items():
        if kind == RECOMPILE_STATIC and _mode_switch(group):
            continue  # training=True/False: one program per mode is the design, not a problem
        yield _recompile_finding(function, defined_at, kind, group)


#: Static values that select a mode (a code path), for which one program each is expected.
_MODES = {"True", "False", "None", "(absent)"}


def _mode_switch(group: Sequence[CompileEvent]) -> bool:
    return is_mode_switch(_values(group, "(static): value"))


def is_mode_switch(values: Sequence[str]) -> bool:
    """Whether every value a static argument took is a flag or a name (``training=False``, ``mode='eval'``),
    at most three of them: a program per mode is what static arguments are for."""
    return bool(values) and len(set(values) - {"(absent)"}) <= 3 and all(
        v in _MODES or (v[:1] in "'\"" and v[-1:] == v[:1]) for v in values)


def _names(group: Sequence[CompileEvent], suffix: str) -> list[str]:
    """The argument paths whose ``suffix`` component changed (``lr`` for "lr (static): value")."""
    names = {c.component.removesuffix(suffix).removesuffix(" (static)") for e in group for c in e.causes
             if c.component.endswith(suffix)}
    return sorted(names)


def _values(group: Sequence[CompileEvent], suffix: str) -> list[str]:
    """Every value the changing component took (the first compile's included), in order of appearance; of
    the one argument that took the most values, where several changed."""
    per_name: dict[str, dict[str, None]] = defaultdict(dict)
    for event in group:
        for cause in event.causes:
            if cause.component.endswith(suffix):
                per_name[cause.component].setdefault(cause.before)
                per_name[cause.component].setdefault(cause.after)
    return list(max(per_name.values(), key=len)) if per_name else []


def _recompile_finding(function: str, defined_at: Location | None, kind: str,
                       group: Sequence[CompileEvent]) -> Finding:
    cost = sum(e.total_s for e in group)
    n = len(group)
    call = next((e.call_site for e in group if e.call_site is not None), None)
    evidence = tuple(f"compile {e.number}: " + ("; ".join(str(c) for c in e.causes) or
                                                (f"same key as compile {e.same_key_as}" if e.same_key_as else
                                                 "cause unknown")) for e in group[:_EVIDENCE])
    gain = cost
    note = (f"the {n} recompiles' own" if n > 1 else "the recompile's own") + " trace and compile time, measured in this run"
    named = f"`{function}`"
    via = group[0].via
    names: list[str] = []
    if kind == RECOMPILE_STATIC:
        names = _names(group, ": value") or _names(group, ": type")
        arg = ", ".join(names) or "a static argument"
        title = f"{named} compiled again {_times(n)}, once per new value of {arg} (static)"
        if via == "equinox.filter_jit":
            change = (f"filter_jit keeps every non-array argument static: pass {arg} as an array "
                      f"(jnp.asarray({names[0] if names else 'value'})) so it is traced")
        else:
            change = (f"let JAX trace {arg}: drop it from static_argnames/static_argnums of `{function}`'s jit "
                      f"(a number used in arithmetic needs no static); keep static only what picks code paths")
        where = defined_at or call
    elif kind == RECOMPILE_SHAPE:
        names = _names(group, ": shape")
        shapes = _values(group, ": shape")
        buckets = _bucket_count(shapes)
        arg = ", ".join(names) or "an argument"
        title = f"{named} compiled again {_times(n)} for {len(shapes)} shapes of {arg}"
        if len(shapes) <= 3 or buckets >= len(shapes):
            change = (f"drop the ragged last batch, or pad {arg} to the largest shape and mask the padding: "
                      f"1 compile instead of {len(shapes)}")
        else:
            change = (f"pad {arg} to a few bucket sizes (powers of two: {buckets} compiles instead of "
                      f"{len(shapes)}) and mask the padding")
            gain = cost * (len(shapes) - buckets) / max(len(shapes) - 1, 1)
            note = (f"{len(shapes)} shapes -> {buckets} power-of-two buckets: that share of the recompiles' "
                    f"time, measured in this run")
        where = call or defined_at
    elif kind == JIT_IN_LOOP:
        if function.endswith("<lambda>") and defined_at is not None:
            named = f"the lambda at {defined_at}"
        title = f"{named} was jitted anew {_times(n)}: each new function object compiles again"
        change = ("build the jit once, outside the loop (step = jax.jit(...) before it), and call that; a lambda "
                  "or a function defined in the loop is a new object each time, with a cache of its own")
        where = call or defined_at
    elif kind == CACHE_DROPPED:
        title = f"{named} compiled again {_times(n)} with the same cache key: JAX had dropped the entry"
        change = ("keep the jitted function alive between calls (a jit made in a function call and thrown away "
                  "is garbage-collected with its cache); do not clear JAX's caches in the loop")
        where = call or defined_at
    elif kind in (RECOMPILE_DTYPE, RECOMPILE_WEAK_TYPE):
        what = "dtype" if kind == RECOMPILE_DTYPE else "weak_type"
        names = _names(group, f": {what}")
        arg = ", ".join(names) or "an argument"
        title = (f"{named} compiled again {_times(n)}: {arg} changed "
                 f"{'dtype' if what == 'dtype' else 'between a Python scalar and an array'}")
        change = f"give {arg} one dtype on every call: jnp.asarray({arg.split(', ')[0]}, jnp.float32) where it is made"
        where = call or defined_at
    elif kind == RECOMPILE_STRUCTURE:
        names = _names(group, ": pytree structure")
        arg = ", ".join(names) or "an argument"
        title = f"{named} compiled again {_times(n)}: the pytree structure of {arg} changed"
        change = f"keep {arg}'s keys and lengths the same on every call (fill missing entries, not drop them)"
        where = call or defined_at
    else:
        title = f"{named} compiled again {_times(n)}"
        change = "make the changing part of the call the same each time (see the causes)"
        where = call or defined_at
    return Finding(kind=kind, title=title, location=where, cost_s=cost, change=change, gain_s=gain,
                   gain=ESTIMATED, gain_note=note, function=function, count=n, evidence=evidence,
                   arguments=tuple(names))


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _bucket_count(shapes: Sequence[str]) -> int:
    """How many power-of-two buckets the leading dimensions of ``shapes`` ("(12, 8)") fall into."""
    import ast

    buckets = set()
    for text in shapes:
        try:
            shape = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return len(shapes)
        if not isinstance(shape, tuple) or not shape or not all(isinstance(d, int) for d in shape):
            return len(shapes)
        buckets.add((max(shape[0] - 1, 0).bit_length(), shape[1:]))
    return len(buckets)


# ------------------------------------------------------------------------------------ work outside jit


def _eager(events: Sequence[CompileEvent]) -> Iterable[Finding]:
    by_line: dict[Location, list[CompileEvent]] = defaultdict(list)
    for event in events:
        if event.kind == JAX_INTERNAL and event.compiled and event.call_site is not None:
            by_line[Location(event.call_site.file, event.call_site.line, event.call_site.function)].append(event)
    for where, group in by_line.items():
        if _again(group) < EAGER_REPEATS:
            continue  # start-up work (jnp.ones, a model's init), not work in a loop
        cost = sum(e.total_s for e in group)
        ops: dict[str, int] = defaultdict(int)
        for event in group:
            ops[event.function] += 1
        listed = ", ".join(f"{op} x{k}" if k > 1 else op for op, k in sorted(ops.items(), key=lambda kv: -kv[1]))
        runs = max(e.visit for e in group)
        yield Finding(
            kind=EAGER_OPS, title=f"{plural(len(group), 'operation')} compiled one by one outside jit ({listed})",
            location=where, cost_s=cost,
            change="move this work into a jitted function (or make its inputs once, outside the loop): "
                   "outside jit every new shape of every operation is a compile of its own",
            gain_s=cost, gain=ESTIMATED,
            gain_note="at most their compile time, measured in this run (in jit they compile once per shape, "
                      "not once per operation); their op-by-op dispatch is not counted",
            count=len(group),
            evidence=(f"{where}: {listed}" + (f", over {runs} runs of the line" if runs > 1 else ""),))


def _again(group: Sequence[CompileEvent]) -> int:
    """How many of a line's eager compiles happened because the line called the same function again (a loop):
    those after each function's first call (schema 1.4's ``visit``). A report without visits: each
    operation's compiles after its first."""
    if all(e.visit for e in group):
        return sum(e.visit > 1 for e in group)
    return len(group) - len({e.function for e in group})


def _slow_compiles(record: RunRecord) -> Iterable[Finding]:
    first: dict[tuple[str, Location | None], CompileEvent] = {}
    for event in record.events:
        if event.kind == USER and event.compiled:
            first.setdefault((event.function, event.defined_at), event)
    for (function, defined_at), event in first.items():
        if record.wall_s <= 0 or event.total_s < SLOW_COMPILE_SHARE * record.wall_s:
            continue
        target = f"{defined_at.file}:{function}" if defined_at is not None else function
        yield Finding(
            kind=SLOW_COMPILE,
            title=f"`{function}`'s first compile took {fmt_duration(event.total_s)}, "
                  f"{event.total_s / record.wall_s:.0%} of the run",
            location=defined_at, cost_s=event.total_s,
            change=f"see which lines the compile time goes to: jitscope trace {target} --from-run "
                   f"--compile-profile (an unrolled Python loop is the usual cause: lax.scan or lax.fori_loop "
                   f"compiles it once)",
            gain_s=0.0, gain=NOT_ESTIMATED, gain_note="depends on the change; the first compile is needed",
            function=function, count=1,
            evidence=(_phases(event),))


def _phases(event: CompileEvent) -> str:
    return (f"trace {fmt_duration(event.trace_s)}, lower {fmt_duration(event.lower_s)}, "
            f"compile {fmt_duration(event.compile_s)}")


def _syncs(sites: Sequence[SyncSite], floor: float) -> Iterable[Finding]:
    for site in sites:
        if site.count < SYNC_REPEATS:
            continue
        on_cpu = site.platform == "cpu"
        if on_cpu and site.overlap_s < floor:
            continue  # listed untimed on CPU, where it would have counted on a GPU
        yield Finding(
            kind=HOST_SYNC,
            title=f"the host waited for the device {site.count} times at this line, copying a value to the host",
            location=site.location, cost_s=0.0 if on_cpu else site.overlap_s,
            change="keep the value on the device and fetch it every N steps (if step % 100 == 0: print(float(loss))), "
                   "or collect the arrays in a list and jax.device_get(...) them once after the loop",
            gain_s=0.0 if on_cpu else site.overlap_s, gain=NOT_ESTIMATED if on_cpu else ESTIMATED,
            gain_note=("not estimated on the CPU backend: its device is the host's own cores, so little of the "
                       f"{fmt_duration(site.overlap_s)} the host's work could run under on a GPU overlaps here "
                       "(measured: about a tenth, benchmarks/doctor_gains.py)" if on_cpu else
                       "the device time the host's own work could have run under, copy by copy (the smaller of the "
                       "host's work between two copies and the wait), measured in this run; more where the device "
                       "also sat idle while the host worked"),
            count=site.count,
            evidence=(f"{site.location}: {site.count} copies, {fmt_duration(site.wait_s)} waiting in all",))


def _effects(events: Sequence[CompileEvent]) -> Iterable[Finding]:
    from jitscope.model.effects import EffectKind

    traces: dict[str, int] = defaultdict(int)
    for event in events:
        if event.traced and event.kind == USER:
            traces[event.function] += 1
    merged: dict[tuple[str, str, Location], str] = {}
    for event in events:
        for effect in event.effects:
            merged.setdefault((effect.kind.value, effect.detail, effect.location), event.function)
    for (kind, detail, where), function in merged.items():
        n = traces.get(function, 1)
        yield Finding(
            kind=TRACE_EFFECT,
            title=f"{detail} runs while JAX traces `{function}` ({plural(n, 'trace')} in this run): it does not run "
                  f"on cached calls",
            location=where, cost_s=0.0, change=EFFECT_ADVICE[EffectKind(kind)], gain_s=0.0, gain=NOT_ESTIMATED,
            gain_note="a correctness hazard, not a cost", function=function, count=n)
