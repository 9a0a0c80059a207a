"""``jitscope doctor module:fn``: one function, called with its examples, ``--shapes`` or ``--from-run``.

What the other commands measure, for one target, as findings: ``bench``'s first call against cached
calls; where the compile dominates, ``trace``'s compile time by line (``profile_compile``); the
memory findings of ``memory.py``; and, where the examples call it with several values of a static
argument, the recompiles they cost (tried traced instead by ``measure.py``, as for a program).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from jitscope.model.common import Location
from jitscope.model.doctor import (
    NOT_ESTIMATED,
    RECOMPILE_STATIC,
    SLOW_COMPILE,
    DoctorReport,
    Finding,
    TargetCall,
)
from jitscope.units import fmt_duration, plural

if TYPE_CHECKING:
    from jitscope.load.specs import ArgSet
    from jitscope.load.target import TargetHandle
    from jitscope.model.bench import BenchRow

#: A first compile this long, and at least half of the first call, is opened by line (one more cold compile);
#: shorter ones are what any model costs once.
SLOW_COMPILE_S = 2.0
#: Seconds of cached calls bench times per call (doctor wants the figure, not bench's precision).
BENCH_BUDGET_S = 0.2


def doctor_target(planned: Sequence[tuple[TargetHandle, ArgSet]], progress: Any = None) -> DoctorReport:
    """Time, compile by line, memory and static recompiles of the planned calls of one or more targets."""
    from jitscope.doctor.device import hot_lines
    from jitscope.doctor.findings import noise_floor
    from jitscope.doctor.memory import MemoryCall, memory_findings
    from jitscope.jaxcompat.stages import environment
    from jitscope.timing.runner import BenchOptions, bench_calls

    report = bench_calls(planned, BenchOptions(budget=BENCH_BUDGET_S, min_rounds=3), progress).report
    by_key = {(h.name, a.describe()): (h, a) for h, a in planned}
    calls = tuple(TargetCall(r.target, r.call, r.cold.median.total, _compile_s(r), r.cached.blocked.median)
                  for r in report.rows)
    findings: list[Finding] = []
    firsts: dict[str, BenchRow] = {}
    groups: dict[str, list[BenchRow]] = defaultdict(list)
    for row in report.rows:
        firsts.setdefault(row.target, row)
        groups[row.target].append(row)
    for name, row in firsts.items():
        handle, argset = by_key[(name, row.call)]
        slow = _slow_compile(handle, argset, row)
        if slow is not None:
            findings.append(slow)
    recompiles = [f for name, rows in groups.items() if (f := _static_recompiles(name, rows, by_key)) is not None]
    if recompiles:
        findings += _measured(recompiles, groups, by_key)
    costliest = [MemoryCall(*by_key[(name, row.call)]) for name, row in firsts.items()]
    memory, notes = memory_findings(costliest)
    device, device_notes = hot_lines(costliest)
    notes += device_notes
    notes = [f"{f.error} (jitscope bench {f.target} shows the traceback)" for f in report.failures] + notes
    wall = sum(c.first_call_s for c in calls)
    findings.sort(key=lambda f: (-f.cost_s, f.title))
    names = ", ".join(dict.fromkeys(h.name for h, _ in planned))
    return DoctorReport(
        program=names, argv=(), exit_code=1 if report.failures else 0,
        outcome=(f"made {plural(len(calls), 'first call')}" + (f", {len(report.failures)} failed" if report.failures
                                                               else "") if calls else "failed on every call"),
        wall_s=round(wall, 6), compile_s=round(sum(c.compile_s for c in calls), 6), compiles=len(calls),
        findings=tuple(findings), noise_floor_s=round(noise_floor(wall), 6), notes=tuple(notes),
        jax_version=str(environment().get("jax", "")) or None, memory=tuple(memory), device=tuple(device),
        calls=calls)


def _compile_s(row: BenchRow) -> float:
    cold = row.cold.median
    return sum(t or 0.0 for t in (cold.trace, cold.lower, cold.compile))


def _slow_compile(handle: TargetHandle, argset: ArgSet, row: BenchRow) -> Finding | None:
    from jitscope.profiling.compile_record import profile_compile

    compile_s = _compile_s(row)
    if compile_s < SLOW_COMPILE_S or compile_s < 0.5 * row.cold.median.total:
        return None
    record = profile_compile(handle, argset)
    lines = [line for line in (record.lines if record is not None else ()) if line.location is not None]
    top = lines[0] if lines else None
    evidence = tuple(f"{line.location}: {fmt_duration(line.compile_seconds or 0.0)} of the compile"
                     + (f", its code repeated {line.copies} times" if line.copies > 1 else "") for line in lines[:3])
    if top is not None and top.advice:
        change = top.advice
    elif top is not None and top.copies > 1:
        change = (f"line {top.location.line} repeats its code {top.copies} times (an unrolled Python loop): "  # type: ignore[union-attr]
                  f"lax.scan or lax.fori_loop compiles the body once")
    else:
        change = (f"nothing in it repeats: the compile is the program's size; jitscope trace {handle.name} "
                  f"--compile-profile shows it by XLA phase and pass, and a persistent compilation cache "
                  f"(jax.config.update('jax_compilation_cache_dir', ...)) pays it once across runs")
    return Finding(
        kind=SLOW_COMPILE,
        title=f"`{handle.name}`'s first call spends {fmt_duration(compile_s)} compiling, "
              f"{compile_s / row.cold.median.total:.0%} of it (a cached call takes "
              f"{fmt_duration(row.cached.blocked.median)})",
        location=top.location if top is not None else None, cost_s=compile_s, change=change,
        gain_s=0.0, gain=NOT_ESTIMATED, gain_note="depends on the change; the first compile is needed",
        function=handle.name, count=1, evidence=evidence)


def _static_recompiles(name: str, rows: Sequence[BenchRow],
                       by_key: dict[tuple[str, str], tuple[TargetHandle, ArgSet]]) -> Finding | None:
    """The examples' calls that differ in a static value: each is a compile of its own."""
    changed = sorted({k for row in rows[1:] for k, v in row.statics.items() if rows[0].statics.get(k) != v})
    if not changed:
        return None
    from jitscope.doctor.findings import is_mode_switch

    if is_mode_switch(sorted({row.statics.get(k, "(absent)") for row in rows for k in changed})):
        return None  # training=True/False: a program per mode is what static arguments are for
    again = [row for row in rows[1:] if any(row.statics.get(k) != rows[0].statics.get(k) for k in changed)]
    cost = sum(_compile_s(row) for row in again)
    handle, _ = by_key[(name, rows[0].call)]
    code = getattr(handle.fn, "__code__", None)
    where = Location(code.co_filename, code.co_firstlineno, handle.attr_path) if code is not None else None
    arg = ", ".join(changed)
    return Finding(
        kind=RECOMPILE_STATIC,
        title=f"`{name}` compiles again for each of the {len(rows)} calls' values of {arg} (static)",
        location=where, cost_s=cost,
        change=(f"let JAX trace {arg}: drop it from static_argnames/static_argnums (a number used in arithmetic "
                f"needs no static); keep static only what picks code paths"),
        gain_s=cost, gain="estimated", gain_note="the recompiles' own trace and compile time, as bench measured them",
        function=name, count=len(again), arguments=tuple(changed),
        evidence=tuple(f"{row.call}: compile {fmt_duration(_compile_s(row))}" for row in rows[:3]))


def _measured(found: list[Finding], groups: dict[str, list[BenchRow]],
              by_key: dict[tuple[str, str], tuple[TargetHandle, ArgSet]]) -> list[Finding]:
    """``measure.py`` tries each change on the calls, as on a program's recorded calls."""
    from jitscope.doctor.measure import AbstractCall, Recorder, measure
    from jitscope.load.abstract import to_abstract
    from jitscope.load.target import jit_options_for

    recorder = Recorder()
    for finding in found:
        for row in groups[finding.function]:
            handle, argset = by_key[(finding.function, row.call)]
            options, _ = jit_options_for(handle, argset)
            args, kwargs = to_abstract(argset)
            recorder.calls[(finding.function, finding.location)].append(
                AbstractCall(handle.fn, args, kwargs, options.static_argnums, options.static_argnames))
    return measure(found, recorder)
