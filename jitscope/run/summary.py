"""From events to per-function summaries and CI gate verdicts. Pure: records in, records out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from jitscope.model.run import SYNC_REPEATS, USER, CompileEvent, FunctionSummary, SyncSite
from jitscope.units import fmt_duration, plural


def should_log(event: CompileEvent, mode: str) -> bool:
    """Whether ``--log MODE`` prints a live line for ``event``: "compiles", "recompiles" or "none"."""
    if mode == "none" or event.kind != USER:
        return False
    return mode == "compiles" or event.number > 1


def cause_name(component: str) -> str:
    """The kind of a cause, e.g. "batch['x']: shape" (component names are "PATH: WHAT")."""
    return component


def recompiled(events: Sequence[CompileEvent]) -> list[CompileEvent]:
    """The recompiles among one function's events: its compiles after the first. A trace that JAX did not
    compile (``jax.eval_shape``, ``make_jaxpr``, ``.lower()`` alone, a trace that raised) is not one."""
    return [e for e in events if e.compiled][1:]


def compiles_cell(function: FunctionSummary) -> str:
    """The functions table's count: ``3``, or ``0, traced 2x`` for a function traced but never compiled."""
    traced_only = function.events - function.compiles
    return f"{function.compiles}, traced {traced_only}x" if not function.compiles else str(function.compiles)


def compiled_functions(functions: Sequence[FunctionSummary]) -> str:
    """The headline's count: ``3 compiles of 2 jitted functions (1 recompile)``, with the user's functions that
    were traced and never compiled (``jax.eval_shape``) said apart."""
    mine = [f for f in functions if f.kind == USER]
    jitted = [f for f in mine if f.compiles]
    recompiles = sum(f.recompiles for f in jitted)
    out = (f"{plural(sum(f.compiles for f in jitted), 'compile')} of {plural(len(jitted), 'jitted function')} "
           f"({plural(recompiles, 'recompile')}")
    traced = [f.function for f in mine if not f.compiles]
    if traced:
        out += f"; traced, never compiled: {', '.join(traced[:3])}{', ...' if len(traced) > 3 else ''}"
    return out + ")"


def internal_compiles(functions: Sequence[FunctionSummary]) -> str | None:
    """The summary's line on compiles that are not the user's functions': what JAX compiled (its log's
    count), not every trace; None when there were none."""
    internal = [f for f in functions if f.kind != USER and f.compiles]
    if not internal:
        return None
    count = sum(f.compiles for f in internal)
    names = ", ".join(f"{f.function} x{f.compiles}" if f.compiles > 1 else f.function for f in internal[:6])
    more = ", ..." if len(internal) > 6 else ""
    seconds = sum(f.total_s for f in functions if f.kind != USER)
    return (f"internal compiles (JAX's eager op-by-op execution, libraries' own jits): {count} in "
            f"{fmt_duration(seconds)}: {names}{more}")


def heavy_syncs(syncs: Sequence[SyncSite], wall_s: float) -> list[SyncSite]:
    """The lines that copied values to the host again and again where the device time the host's own work could
    have run under (``SyncSite.overlap_s``) is 1% of the run or more, worst first; not on the CPU backend,
    whose device is the host's own cores (little of it overlaps there)."""
    return sorted((s for s in syncs if s.count >= SYNC_REPEATS and s.overlap_s >= 0.01 * wall_s
                   and s.platform != "cpu"), key=lambda s: -s.overlap_s)


def sync_lines(syncs: Sequence[SyncSite], wall_s: float, top: int = 3) -> list[str]:
    """The summary's lines on the lines of code that waited most for the device, copying values to the host."""
    return [f"host-device sync: {s.location} copied a value to the host {s.count} times, waiting "
            f"{fmt_duration(s.wait_s)} for the device ({fmt_duration(s.overlap_s)} of it could have run under the "
            f"host's work)" for s in heavy_syncs(syncs, wall_s)[:top]]


def summarize(events: Sequence[CompileEvent]) -> tuple[FunctionSummary, ...]:
    """One summary per function, the worst offenders (most time in trace+lower+compile) first."""
    groups: dict[tuple[str, str], list[CompileEvent]] = {}
    for event in events:
        where = str(event.defined_at) if event.defined_at is not None else ""
        groups.setdefault((event.function, where), []).append(event)
    out = []
    for (name, _), group in groups.items():
        causes: Counter[str] = Counter()
        for event in group:
            if event.same_key_as:
                causes["same key as an earlier compile (JAX dropped its cache entry)"] += 1
            for cause in event.causes:
                causes[cause_name(cause.component)] += 1
        first = group[0]
        out.append(FunctionSummary(
            function=name, defined_at=first.defined_at, kind=first.kind, events=len(group),
            compiles=sum(e.compiled for e in group), trace_s=sum(e.trace_s for e in group),
            lower_s=sum(e.lower_s for e in group), compile_s=sum(e.compile_s for e in group),
            causes=tuple(causes.most_common()),
        ))
    return tuple(sorted(out, key=lambda f: (f.kind != USER, -f.compiles, -f.total_s)))


@dataclass(frozen=True, slots=True)
class Gates:
    """CI limits; None means no limit."""

    max_compiles: int | None = None  # per function
    fail_on_recompile: bool = False
    max_compile_time: float | None = None  # seconds, whole program

    def active(self) -> bool:
        return self.max_compiles is not None or self.fail_on_recompile or self.max_compile_time is not None


def check_gates(gates: Gates, functions: Sequence[FunctionSummary]) -> tuple[str, ...]:
    """One line per failed gate. Only the user's own functions count (not JAX's eager op compiles)."""
    failures = []
    mine = [f for f in functions if f.kind == USER]
    if gates.max_compiles is not None:
        over = [f for f in mine if f.compiles > gates.max_compiles]
        if over:
            worst = over[0]
            others = f" (and {len(over) - 1} more)" if len(over) > 1 else ""
            failures.append(f"{worst.function} compiled {worst.compiles} times{others} "
                            f"(--max-compiles {gates.max_compiles})")
    if gates.fail_on_recompile:
        recompiled = [f for f in mine if f.compiles > 1]
        if recompiled:
            names = ", ".join(f"{f.function} ({f.compiles - 1})" for f in recompiled[:3])
            failures.append(f"recompiles: {names}{' ...' if len(recompiled) > 3 else ''} (--fail-on-recompile)")
    if gates.max_compile_time is not None:
        total = sum(f.total_s for f in functions)
        if total > gates.max_compile_time:
            failures.append(f"{fmt_duration(total)} spent tracing and compiling (--max-compile-time {gates.max_compile_time:g})")
    return tuple(failures)
