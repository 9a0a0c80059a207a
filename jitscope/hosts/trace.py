"""The trace reports of every process of one ``trace --processes`` run, lined up call by call.

Each process traced and compiled its part of the program (nothing runs: no collective is entered, so a
mismatch cannot hang it); per call, each process's program fingerprint (``run/programs.py``, as
``jitscope run`` records it: the optimised HLO without what legitimately differs between processes)
and its trace and compile times side by side. Programs that differ are flagged as ``jitscope merge``
flags them (``hosts/merge.mismatch_finding``: the first differing HLO line, the source line behind
it, and whether the collectives differ); a compile straggler as bench's compiles are judged with
one compile each: at least ``STRAGGLER_RATIO`` and ``STRAGGLER_MIN_S`` longer.
"""

from __future__ import annotations

from collections.abc import Sequence

from jitscope.hosts.merge import STRAGGLER_MIN_S, STRAGGLER_RATIO, mismatch_finding
from jitscope.hosts.programs import collectives, first_difference
from jitscope.hosts.reports import load_process_reports
from jitscope.model.hosts import (
    SLOW,
    BenchProcess,
    BenchSkew,
    Finding,
    MergedTraceCall,
    TraceFigures,
    TraceMergeReport,
)
from jitscope.model.run import CompiledProgram
from jitscope.model.trace import TraceRecord, TraceReport
from jitscope.units import fmt_duration

TRACE_KIND = "jitscope.trace"


def load_trace_reports(paths: Sequence[str]) -> list[tuple[str, TraceReport]]:
    """Every process's trace report, by process index, checked to be one run's."""
    return load_process_reports(paths, TraceReport, TRACE_KIND, "trace")


def merge_trace(loaded: Sequence[tuple[str, TraceReport]]) -> TraceMergeReport:
    """The merged report (``loaded`` sorted by process index, from ``load_trace_reports`` or a launch)."""
    processes = []
    records: dict[tuple[str, str, int], dict[int, TraceRecord]] = {}
    for path, report in loaded:
        process = report.process
        assert process is not None
        processes.append(BenchProcess(process.index, process.host, process.local_devices, path))
        for record in report.traces:
            records.setdefault((record.target, record.call, record.call_index), {})[process.index] = record
    calls = [_merged_call(key, by_process) for key, by_process in records.items()]
    first = loaded[0][1]
    count = first.process.count if first.process else len(loaded)
    return TraceMergeReport(process_count=count, processes=tuple(processes), calls=tuple(calls),
                            findings=tuple(_findings(calls)))


def _figures(index: int, record: TraceRecord) -> TraceFigures:
    stages = record.stages
    return TraceFigures(process=index, trace_s=record.trace_seconds,
                        lower_s=stages.lower_seconds if stages is not None else None,
                        compile_s=stages.compile_seconds if stages is not None else None,
                        fingerprint=record.program.fingerprint if record.program is not None else "",
                        failed=record.diagnostic.message if record.diagnostic is not None else "")


def _merged_call(key: tuple[str, str, int], by_process: dict[int, TraceRecord]) -> MergedTraceCall:
    order = sorted(by_process)
    figures = tuple(_figures(index, by_process[index]) for index in order)
    built: dict[str, list[int]] = {}
    programs: dict[str, CompiledProgram] = {}
    for index in order:
        program = by_process[index].program
        if program is not None:
            built.setdefault(program.fingerprint, []).append(index)
            programs.setdefault(program.fingerprint, program)
    groups = sorted(built.items(), key=lambda item: (-len(item[1]), item[1][0]))
    differences = []
    if len(groups) > 1:
        ref_print, ref_procs = groups[0]
        differences = [first_difference(programs[ref_print], programs[fp], tuple(ref_procs), tuple(procs))
                       for fp, procs in groups[1:]]
    return MergedTraceCall(target=key[0], call=key[1], figures=figures,
                           programs=tuple((fp, tuple(procs)) for fp, procs in groups),
                           differences=tuple(differences),
                           collectives=collectives(programs[groups[0][0]]) if groups else (),
                           compile=compile_skew(figures))


def compile_skew(figures: Sequence[TraceFigures]) -> BenchSkew | None:
    """Slowest / fastest compile, flagged at STRAGGLER_RATIO and STRAGGLER_MIN_S longer (one compile each: no
    spread of its own is known)."""
    timed = {f.process: f.compile_s for f in figures if f.compile_s}
    if len(timed) < 2:
        return None
    fastest = min(timed, key=lambda p: (timed[p], p))
    slowest = max(timed, key=lambda p: (timed[p], -p))
    low, high = timed[fastest] or 0.0, timed[slowest] or 0.0
    ratio = high / low
    return BenchSkew(round(ratio, 4), fastest, slowest, None, ratio >= STRAGGLER_RATIO and high - low >= STRAGGLER_MIN_S)


def call_name(call: MergedTraceCall) -> str:
    return f"{call.target.rsplit(':', 1)[-1]}({call.call})"


def _findings(calls: Sequence[MergedTraceCall]) -> list[Finding]:
    out: list[Finding] = []
    for call in calls:
        out.extend(mismatch_finding(call_name(call), call.target, diff) for diff in call.differences)
    for call in calls:
        failed = [f for f in call.figures if f.failed]
        if failed and len(failed) < len(call.figures):
            where = ", ".join(f"p{f.process}" for f in failed)
            out.append(Finding(SLOW, "trace-failed", f"{call_name(call)} failed to trace on {where} only: "
                               f"{failed[0].failed}", tuple(f.process for f in failed), call.target))
        if call.compile is not None and call.compile.flagged:
            s = call.compile
            by_process = {f.process: f for f in call.figures}
            out.append(Finding(SLOW, "compile-straggler",
                               f"p{s.slowest} is the straggler in {call_name(call)}'s compile: "
                               f"{fmt_duration(by_process[s.slowest].compile_s or 0.0)}, {s.ratio:.2f}x "
                               f"p{s.fastest}'s {fmt_duration(by_process[s.fastest].compile_s or 0.0)} (one compile "
                               f"each: at least {STRAGGLER_RATIO}x and {fmt_duration(STRAGGLER_MIN_S)} longer)",
                               (s.slowest,), call.target))
    return out
