"""Memory findings: what ``jitscope memory`` finds at the peak of one call of a function, as doctor findings.

Nothing is analysed twice: each call is ``jitscope memory``'s analysis (``buffers/runner.py``'s
``memory_row``, with ``--try-remat``). Its advice becomes a finding only where the change, applied
without editing the user's files, measurably lowers the compiled program's peak:

- missing donation: the arguments memory says could be donated (shape and dtype of an output) that the
  caller replaces with the result (``params = step(params, batch)``, read at the call's line); the
  function is compiled again with those ``donate_argnums`` and the two peaks compared;
- residuals that remat could drop: ``--try-remat``'s own compiles under ``jax.checkpoint``.

A library's jit (``nnx.jit``, ``eqx.filter_jit``) donates by its own rules: those calls never reach here
(``measure.Recorder`` keeps plain ``jax.jit`` calls only).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jitscope.doctor.callsite import replaced_arguments
from jitscope.errors import JitscopeError
from jitscope.model.common import Location
from jitscope.model.doctor import MEASURED, MISSING_DONATION, REMAT_RESIDUALS, Finding
from jitscope.model.run import USER, RunRecord
from jitscope.units import fmt_bytes

if TYPE_CHECKING:
    from jitscope.doctor.measure import Recorder
    from jitscope.load.specs import ArgSet
    from jitscope.load.target import TargetHandle
    from jitscope.model.memory import MemoryRow

#: Functions analysed, costliest first (each is a compile with XLA's dump, two more with --try-remat's
#: policies where it has a backward pass, and one with the donation tried).
MAX_FUNCTIONS = 3
#: Seconds the memory analyses may take in all; the next function is not started past it.
BUDGET_S = 12.0
#: A change that takes less than this off the peak (or than ``MIN_SHARE`` of it) is noise.
MIN_BYTES, MIN_SHARE = 1 << 20, 0.05
_NAME = re.compile(r"^[A-Za-z_]\w*")


@dataclass(frozen=True)
class MemoryCall:
    """One call to analyse (a handle: live objects) and the user's line that made it, when known."""

    target: TargetHandle
    argset: ArgSet
    call_site: Location | None = None
    defined_at: Location | None = None


def byte_floor(peak: int) -> int:
    return max(MIN_BYTES, int(MIN_SHARE * peak))


def memory_findings(calls: Sequence[MemoryCall], budget_s: float = BUDGET_S) -> tuple[list[Finding], list[str]]:
    """The calls' memory findings, most bytes at the peak first, and notes (a call that could not be analysed)."""
    from jitscope.buffers.runner import MemoryOptions, memory_row
    from jitscope.jaxcompat import xla_dump
    from jitscope.timing.runner import device_errors

    findings: list[Finding] = []
    notes: list[str] = []
    if not calls:
        return findings, notes
    try:
        xla_dump.check_supported()
    except JitscopeError as err:  # an old JAX: the time findings stand alone
        return findings, [f"memory: not analysed: {err.message}"]
    started = time.perf_counter()
    for call in calls:
        if time.perf_counter() - started > budget_s:
            notes.append(f"memory: {call.target.name} not analysed (doctor's {budget_s:.0f} s budget for memory "
                         f"was spent): jitscope memory {call.target.name} --try-remat shows it")
            continue
        try:
            with device_errors(f"compiling {call.target.name}({call.argset.describe()})"):
                row = memory_row(call.target, call.argset, MemoryOptions(try_remat=True))
                findings += _donation(call, row)
        except JitscopeError as err:
            notes.append(f"memory: {call.target.name} could not be analysed: {err.message}")
            continue
        findings += _remat(call, row)
    findings.sort(key=lambda f: (-f.cost_bytes, -f.gain_bytes, f.title))
    return findings, notes


def calls_from_run(record: RunRecord, recorder: Recorder, donated: dict[tuple[str, Location | None], tuple[int, ...]],
                   limit: int = MAX_FUNCTIONS) -> list[MemoryCall]:
    """The run's plain-jit functions that cost the most (trace, lower and compile seconds), each with its
    last recorded call, jitted as the user jitted it (statics, donations)."""
    summaries = sorted((f for f in record.functions if f.kind == USER),
                       key=lambda f: -(f.trace_s + f.lower_s + f.compile_s))
    sites = {(e.function, e.defined_at): e.call_site for e in record.events if e.kind == USER}
    out: list[MemoryCall] = []
    for summary in summaries:
        key = (summary.function, summary.defined_at)
        recorded = recorder.calls.get(key)
        if not recorded:
            continue
        call = recorded[-1]
        target = _handle(summary.function, call.fun, call.args, call.kwargs, call.static_argnums,
                         call.static_argnames, donated.get(key, ()))
        if target is None:
            continue
        out.append(MemoryCall(target, target.examples[0], sites.get(key), summary.defined_at))
        if len(out) >= limit:
            break
    return out


def _handle(name: str, fun: object, args: tuple[object, ...], kwargs: dict[str, object], static_argnums: tuple[int, ...],
            static_argnames: tuple[str, ...], donate_argnums: tuple[int, ...]) -> TargetHandle | None:
    from jitscope.jaxcompat.jit import JitOptions
    from jitscope.jaxcompat.wrappers import FUNCTION, JAX_JIT, recognise
    from jitscope.load.live import live_target

    if recognise(fun).kind not in (FUNCTION, JAX_JIT):
        return None  # nnx.jit's JitFn reaches jax.jit as a plain call: it is re-jitted by its own rules only
    try:
        target = live_target(fun, args, kwargs, text=name, attr_path=name, how="a call the run made",
                             static_argnums=static_argnums, static_argnames=static_argnames, abstract=True)
    except JitscopeError:
        return None
    options = JitOptions(static_argnums=static_argnums, static_argnames=static_argnames, donate_argnums=donate_argnums,
                         from_user_jit=True)
    return dataclasses.replace(target, options=options)


# ------------------------------------------------------------------------------------ donation


def _argnums(call: MemoryCall, row: MemoryRow) -> dict[int, list[str]]:
    """Positional argument -> the candidates memory found in it (``params['w1']`` is in ``params``)."""
    from jitscope.load.target import parameter_names

    names = parameter_names(call.target.fn)
    found: dict[int, list[str]] = {}
    for candidate in row.donations:
        match = _NAME.match(candidate.argument)
        if match is None or match.group(0) not in names:
            continue
        argnum = names.index(match.group(0))
        if argnum < len(call.argset.args) and argnum not in call.target.options.donate_argnums:
            found.setdefault(argnum, []).append(candidate.argument)
    return found


def _donation(call: MemoryCall, row: MemoryRow) -> Iterable[Finding]:
    from jitscope.buffers.runner import MemoryOptions, memory_row
    from jitscope.jaxcompat.wrappers import FUNCTION, JAX_JIT, recognise
    from jitscope.load.target import parameter_names

    if recognise(call.target.original).kind not in (JAX_JIT, FUNCTION):
        return  # nnx.jit, eqx.filter_jit: the library decides what is donated (eqx.filter_jit(donate=...))
    found = _argnums(call, row)
    replaced = replaced_arguments(call.call_site, len(call.argset.args)) if call.call_site is not None else None
    if replaced is not None:  # an argument the caller keeps using after the call must not be donated
        found = {n: c for n, c in found.items() if n in replaced}
    if not found:
        return
    argnums = tuple(sorted(found))
    names = [parameter_names(call.target.fn)[n] for n in argnums]
    donated = tuple(sorted({*call.target.options.donate_argnums, *argnums}))  # the user's own donations kept
    options = dataclasses.replace(call.target.options, donate_argnums=donated)
    tried = memory_row(dataclasses.replace(call.target, options=options), call.argset, MemoryOptions())
    gain = row.peak.bytes - tried.peak.bytes
    if gain < byte_floor(row.peak.bytes):
        return  # this backend's compiled program does not get smaller: nothing to fix here
    held = sum(d.bytes for d in row.donations if any(d.argument in c for c in found.values()))
    donate = f"donate_argnums={donated[0]}" if len(donated) == 1 else f"donate_argnums={donated}"
    statics = "".join(f", {k}={v!r}" for k, v in (("static_argnums", call.target.options.static_argnums),
                                                    ("static_argnames", call.target.options.static_argnames)) if v)
    function = call.target.name
    short = call.target.attr_path.rsplit(".", 1)[-1].rsplit(":", 1)[-1]
    site = call.call_site
    if replaced is None or site is None:
        caller = (f"if the caller replaces {' and '.join(names)} with the result ({names[0]} = "
                  f"{short}({names[0]}, ...)), ")
    else:
        caller = f"the call replaces {' and '.join(names)} with the result (line {site.line}), so "
    yield Finding(
        kind=MISSING_DONATION,
        title=f"`{function}` returns new {', '.join(names)} of the same shapes without donating the old: XLA "
              f"allocates {fmt_bytes(held)} for a second copy",
        location=call.defined_at or row.function, cost_s=0.0,
        change=f"{caller}donate {'it' if len(names) == 1 else 'them'}: jax.jit({short}, {donate}{statics}) "
               f"(as a decorator: @functools.partial(jax.jit, {donate}{statics})); the old "
               f"{'buffer is' if len(names) == 1 else 'buffers are'} then invalid after the call",
        gain_s=0.0, gain=MEASURED,
        gain_note=(f"`{function}` compiled again with {donate}: peak {fmt_bytes(row.peak.bytes)} -> "
                   f"{fmt_bytes(tried.peak.bytes)}, needed on the device {fmt_bytes(row.totals.reserved)} -> "
                   f"{fmt_bytes(tried.totals.reserved)} ({row.backend}, XLA's buffer assignment)"),
        function=function, count=len(found), arguments=tuple(names),
        evidence=tuple(f"{d.argument}: {d.shape}, {fmt_bytes(d.bytes)}, the shape of {d.output}"
                       for d in row.donations if any(d.argument in c for c in found.values()))[:3],
        cost_bytes=held, gain_bytes=gain)


# ------------------------------------------------------------------------------------ remat


def _remat(call: MemoryCall, row: MemoryRow) -> Iterable[Finding]:
    trials = [t for t in row.remat if not t.error and t.peak > 0]
    if not trials or not row.residuals:
        return
    best = min(trials, key=lambda t: t.peak)
    gain = row.peak.bytes - best.peak
    if gain < byte_floor(row.peak.bytes):
        return
    top = row.residuals[0]
    at_peak = sum(r.at_peak for r in row.residuals)
    function = call.target.name
    yield Finding(
        kind=REMAT_RESIDUALS,
        title=f"`{function}` keeps {fmt_bytes(at_peak)} of activations for the backward pass live at the peak; "
              f"jax.checkpoint recomputes them",
        location=top.location, cost_s=0.0,
        change=(f"wrap the function given to jax.grad / jax.value_and_grad in jax.checkpoint(loss_fn, "
                f"policy=jax.checkpoint_policies.{best.policy}): the backward pass recomputes these activations "
                f"instead of keeping them (more compute per step)"),
        gain_s=0.0, gain=MEASURED,
        gain_note=(f"jitscope memory --try-remat: `{function}` compiled again under "
                   f"jax.checkpoint(policy={best.policy}): peak {fmt_bytes(row.peak.bytes)} -> "
                   f"{fmt_bytes(best.peak)} ({row.backend})"),
        function=function, count=len(row.residuals),
        evidence=tuple(f"{r.location}: {fmt_bytes(r.at_peak)} live at the peak ({', '.join(r.primitives)})"
                       for r in row.residuals[:3]),
        cost_bytes=at_peak, gain_bytes=gain)
