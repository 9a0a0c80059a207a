"""Every process's ``jitscope run`` report of one program, lined up compile by compile.

Pure: records in, a ``MergeReport`` out. Compiles line up by function, signature and occurrence
(``MergedCompile``); per line it says which processes made it, why, when each began it, how long
each took, and whether they all built the same program. The findings are what an engineer
debugging a hung or slow multi-process job reads first, worst first:

1. a process that never wrote its final report (hung or killed), and where it stopped;
2. compiles whose program differs between processes (the likely cause of a hang: their collectives
   do not match), with the first differing HLO line and the source line behind it;
3. compiles made on some processes only (one host recompiled: a shorter last batch, another static
   value) with the cause there, and whether the program has collectives the others wait in;
4. processes that exited differently, or ran another JAX;
5. stragglers: a process slower to compile, or later than the others to reach the same compiles
   (on the hosts' wall clocks);
6. trace-time side effects that differ between processes (a Python branch on the process).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from jitscope.hosts.load import ProcessReport
from jitscope.hosts.programs import collectives, first_difference
from jitscope.model.hosts import (
    HANG,
    INFO,
    SLOW,
    Finding,
    FunctionRow,
    MergedCompile,
    MergeReport,
    ProcessCompile,
    ProcessRow,
    ProgramDifference,
    Skew,
)
from jitscope.model.run import JAX_INTERNAL, CompiledProgram, CompileEvent
from jitscope.run.causes import describe_causes
from jitscope.units import fmt_duration
from jitscope.userframes import display_path

#: A compile is a straggler's when it took this many times the median and at least STRAGGLER_MIN_S longer.
STRAGGLER_RATIO = 1.5
STRAGGLER_MIN_S = 0.25
#: A process that began shared compiles this much after the first, in most of them, is named as late.
LATE_MIN_S = 0.5

_Key = tuple[str, str, str, str, int]  # function, defined at, kind, signature, occurrence


def failed_finding(what: str, call: str, failed_on: tuple[int, ...], count: int, target: str) -> Finding:
    """bench's and profile's finding for a call that failed on some processes (``what``: its kind)."""
    where = ", ".join(f"p{i}" for i in failed_on)
    return Finding(SLOW, what, f"{call} failed on {where} of {count} processes", failed_on, target)


def merge(reports: Sequence[ProcessReport], notes: Sequence[str] = ()) -> MergeReport:
    """The merged report of one run's processes (``reports`` sorted by process index)."""
    first = reports[0].record
    assert first.process is not None
    rows: dict[_Key, dict[int, CompileEvent]] = {}
    order: dict[_Key, float] = {}
    programs: dict[tuple[_Key, int], CompiledProgram] = {}
    for report in reports:
        seen: Counter[tuple[str, str, str, str]] = Counter()
        for event in report.record.events:
            if event.kind == JAX_INTERNAL:
                continue
            base = (event.function, str(event.defined_at or ""), event.kind, event.signature)
            seen[base] += 1
            key = (*base, seen[base])
            rows.setdefault(key, {})[report.index] = event
            order[key] = min(order.get(key, float("inf")), event.index)
            if event.program is not None:
                programs[(key, report.index)] = event.program
    indices = tuple(r.index for r in reports)
    starts = {r.index: r.record.process.started_unix if r.record.process else 0.0 for r in reports}
    compiles = tuple(_merged(key, rows[key], indices, starts, programs)
                     for key in sorted(rows, key=lambda k: (order[k], k)))
    processes = tuple(_process_row(r) for r in reports)
    functions = _functions(reports, indices)
    findings = _findings(reports, processes, compiles)
    return MergeReport(program=first.program, argv=first.argv, process_count=first.process.count,
                       processes=processes, findings=tuple(findings), functions=functions, compiles=compiles,
                       notes=(*notes, *_argument_notes(reports)))


def _argument_notes(reports: Sequence[ProcessReport]) -> list[str]:
    """Each process's arguments when they differ (``prog.py PROCESS_ID NUM_PROCESSES PORT``): the title shows
    the first process's."""
    if len({r.record.argv for r in reports}) == 1:
        return []
    each = "; ".join(f"p{r.index}: {' '.join(r.record.argv) or '(none)'}" for r in reports)
    return [f"the processes were given different arguments ({each}); the title shows p{reports[0].index}'s"]


def _merged(key: _Key, events: dict[int, CompileEvent], indices: tuple[int, ...], starts: dict[int, float],
            programs: dict[tuple[_Key, int], CompiledProgram]) -> MergedCompile:
    began = {i: starts[i] + _start(e) for i, e in events.items()}
    earliest = min(began.values())
    parts = tuple(ProcessCompile(
        process=i, number=e.number, at_s=round(_start(e), 6), behind_s=round(began[i] - earliest, 6),
        trace_s=e.trace_s, lower_s=e.lower_s, compile_s=e.compile_s, call_site=e.call_site, cause=describe_causes(e),
        changed=tuple(c.component for c in e.causes),
        fingerprint=e.program.fingerprint if e.program is not None else "", effects=e.effects)
        for i, e in sorted(events.items()))
    by_print: dict[str, list[int]] = {}
    for part in parts:
        if part.fingerprint:
            by_print.setdefault(part.fingerprint, []).append(part.process)
    groups = sorted(by_print.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    differences = []
    if len(groups) > 1:
        _, ref_procs = groups[0]
        for _, other_procs in groups[1:]:
            differences.append(first_difference(programs[(key, ref_procs[0])], programs[(key, other_procs[0])],
                                                 tuple(ref_procs), tuple(other_procs)))
    program = next((programs[(key, i)] for i in sorted(events) if (key, i) in programs), None)
    effect_sets = {frozenset((x.kind, x.detail, str(x.location)) for x in p.effects) for p in parts}
    function, _, kind, signature, occurrence = key
    first = next(iter(events.values()))
    return MergedCompile(
        function=function, defined_at=first.defined_at, kind=kind, signature=signature, occurrence=occurrence,
        processes=parts, missing=tuple(i for i in indices if i not in events),
        programs=tuple((fp, tuple(p)) for fp, p in groups), differences=tuple(differences),
        collectives=collectives(program) if program is not None else (),
        compile_skew=_skew({p.process: p.total_s for p in parts}),
        arrival_skew=_skew({p.process: p.behind_s for p in parts}),
        effects_differ=len(effect_sets) > 1 or (len(parts) < len(indices) and any(p.effects for p in parts)),
    )


def _start(event: CompileEvent) -> float:
    """Seconds after its process started, when the event began (it is recorded when it ends)."""
    return max(event.at_s - event.trace_s - event.lower_s - event.compile_s, 0.0)


def _skew(values: dict[int, float]) -> Skew | None:
    if len(values) < 2:
        return None
    fastest = min(values, key=lambda i: (values[i], i))
    slowest = max(values, key=lambda i: (values[i], -i))
    return Skew(round(values[fastest], 6), round(statistics.median(values.values()), 6), round(values[slowest], 6),
                fastest, slowest)


def _process_row(report: ProcessReport) -> ProcessRow:
    record = report.record
    process = record.process
    assert process is not None
    mine = [e for e in record.events if e.kind != JAX_INTERNAL]
    last = max((e for e in mine if e.compiled), key=lambda e: e.at_s, default=None)
    return ProcessRow(
        index=process.index, host=process.host, file=report.path, local_devices=process.local_devices,
        outcome=record.outcome, exit_code=record.exit_code, partial=record.partial, wall_s=record.wall_s,
        compiles=sum(e.compiled for e in mine), compile_s=round(sum(e.total_s for e in mine), 6),
        internal_compiles=sum(e.compiled for e in record.events if e.kind == JAX_INTERNAL),
        last_compile=f"{last.function} compile {last.number} at {last.at_s:.2f} s" if last is not None else "",
        jax_version=record.jax_version, pid=process.pid, started_unix=process.started_unix)


def _functions(reports: Sequence[ProcessReport], indices: tuple[int, ...]) -> tuple[FunctionRow, ...]:
    rows: dict[tuple[str, str], FunctionRow] = {}
    for report in reports:
        for summary in report.record.functions:
            if summary.kind == JAX_INTERNAL:
                continue
            key = (summary.function, str(summary.defined_at or ""))
            row = rows.get(key) or FunctionRow(summary.function, summary.defined_at, summary.kind,
                                               tuple(0 for _ in indices), tuple(0.0 for _ in indices))
            at = indices.index(report.index)
            rows[key] = FunctionRow(row.function, row.defined_at, row.kind,
                                    row.compiles[:at] + (summary.compiles,) + row.compiles[at + 1:],
                                    row.total_s[:at] + (round(summary.total_s, 6),) + row.total_s[at + 1:])
    return tuple(sorted(rows.values(), key=lambda r: (-max(r.compiles), -max(r.total_s), r.function)))


def _findings(reports: Sequence[ProcessReport], processes: tuple[ProcessRow, ...],
              compiles: tuple[MergedCompile, ...]) -> list[Finding]:
    out: list[Finding] = []
    finished = [p for p in processes if not p.partial]
    for row in processes:
        if row.partial:
            where = f"its last compile: {row.last_compile}" if row.last_compile else "no compile of your code"
            after = _compiled_after(row.index, compiles)
            tail = f"; the others went on to {after}" if after else ""
            out.append(Finding(HANG, "partial", f"p{row.index} ({row.host}) never finished: its report is the one "
                               f"written while it ran ({fmt_duration(row.wall_s)} in), so it hung or was killed; "
                               f"{where}{tail}", (row.index,)))
    for merged in compiles:
        out.extend(mismatch_finding(_title(merged), merged.function, diff) for diff in merged.differences)
    for merged in compiles:
        if not merged.missing or all(_stopped_before(m, processes, merged) for m in merged.missing):
            continue
        on = _names(tuple(p.process for p in merged.processes))
        why = "; ".join(f"p{p.process}: {p.cause}" + (f" at {p.call_site}" if p.call_site else "")
                        for p in merged.processes if p.cause) or "its first compile there"
        if merged.collectives:
            stake = (f"its program has collectives ({', '.join(merged.collectives)}): the other processes wait "
                     "in them while it compiles, and hang if they never run the same program")
            level = HANG
        else:
            stake = "no collectives in it: the others only wait for its compile time at their next collective"
            level = SLOW
        out.append(Finding(level, "one-process-compile",
                           f"{_title(merged)} compiled on {on} only, not on {_names(merged.missing)}: {why}; {stake}",
                           tuple(p.process for p in merged.processes), merged.function))
    for row in finished:
        if row.exit_code != 0:
            others: dict[str, list[int]] = {}
            for p in processes:
                if p.index != row.index and not p.partial:
                    others.setdefault(p.outcome, []).append(p.index)
            said = "; ".join(f"{_names(tuple(i))}: {o}" for o, i in others.items()) if others else \
                "the others never finished"
            out.append(Finding(HANG, "exit", f"p{row.index} ({row.host}) {row.outcome} (exit {row.exit_code}); "
                               f"{said}", (row.index,)))
    versions = Counter(p.jax_version for p in processes)
    if len(versions) > 1:
        text = ", ".join(f"{v or '?'} on {_names(tuple(p.index for p in processes if p.jax_version == v))}"
                         for v in versions)
        out.append(Finding(HANG, "versions", f"the processes ran different JAX versions ({text}): they can "
                           "compile different programs for the same code", tuple(p.index for p in processes)))
    out.extend(_stragglers(processes, compiles))
    for merged in compiles:
        if merged.effects_differ:
            per = "; ".join(f"p{p.process}: " + (", ".join(f"{e.detail} at {e.location}" for e in p.effects) or "none")
                            for p in merged.processes)
            out.append(Finding(INFO, "effects", f"{_title(merged)}: Python side effects while tracing differ between "
                               f"processes ({per}): the traced code branches on the process", (), merged.function))
    return out


def _stragglers(processes: tuple[ProcessRow, ...], compiles: tuple[MergedCompile, ...]) -> list[Finding]:
    out: list[Finding] = []
    if len(processes) < 2:
        return out
    shared = [c for c in compiles if not c.missing and c.arrival_skew is not None]
    # like for like: the compiles every process made (one made alone is its own finding)
    totals = {p.index: sum(next(x.total_s for x in c.processes if x.process == p.index) for c in shared)
              for p in processes}
    for row in processes:
        mine = totals[row.index]
        typical = statistics.median([v for i, v in totals.items() if i != row.index])
        if mine > typical * STRAGGLER_RATIO and mine - typical >= STRAGGLER_MIN_S:
            out.append(Finding(SLOW, "compile-straggler",
                               f"p{row.index} ({row.host}) spent {fmt_duration(mine)} tracing and compiling what every "
                               f"process compiled, the others {fmt_duration(typical)} (median)"
                               + (f": {mine / typical:.1f}x" if typical > 0 else ""), (row.index,)))
    if shared:
        last = Counter(c.arrival_skew.slowest for c in shared if c.arrival_skew and c.arrival_skew.max_s >= LATE_MIN_S)
        for index, count in last.most_common(1):
            if count * 2 > len(shared):
                worst = max(c.arrival_skew.max_s for c in shared if c.arrival_skew and c.arrival_skew.slowest == index)
                host = next(p.host for p in processes if p.index == index)
                out.append(Finding(SLOW, "arrival-straggler",
                                   f"p{index} ({host}) began {count} of the {len(shared)} compiles every process made "
                                   f"last, up to {fmt_duration(worst)} after the first (wall clocks): the others wait "
                                   "for it at every collective; it is slower before those steps (input pipeline, a "
                                   "slower host, more work on it)", (index,)))
    return out


def _compiled_after(index: int, compiles: tuple[MergedCompile, ...]) -> str:
    """What the other processes compiled that ``index`` never did (it stopped before): the first of it."""
    later = [c for c in compiles if index in c.missing]
    if not later:
        return ""
    more = f" (and {len(later) - 1} more)" if len(later) > 1 else ""
    return f"{_title(later[0])}{more}"


def _stopped_before(index: int, processes: tuple[ProcessRow, ...], merged: MergedCompile) -> bool:
    """A partial process's missing compile is reported with it (it never got there), not as one-sided."""
    return any(p.index == index and p.partial for p in processes)


def mismatch_finding(title: str, function: str, diff: ProgramDifference) -> Finding:
    """"p1 compiled a different program from p0", with the first difference and what the collectives say."""
    procs = _names(diff.processes)
    ref = _names(diff.reference)
    if diff.unavailable:
        detail = f" ({diff.unavailable})"
    else:
        near = " (nearby)" if diff.source_nearby else ""
        src = f" from {display_path(str(diff.source))}{near}" if diff.source is not None else ""
        ref_src = (f" from {display_path(str(diff.reference_source))}{near}"
                   if diff.reference_source is not None else "")
        detail = (f"; first difference, line {diff.line}"
                  f"{' in ' + diff.computation if diff.computation else ''}: {procs}: "
                  f"{diff.text or '(program ends)'}{src}; {ref}: {diff.reference_text or '(program ends)'}"
                  f"{ref_src}")
    if diff.unavailable:
        coll = ": the likely cause of a hang"
    elif diff.collectives != diff.reference_collectives:
        coll = (f": the likely cause of a hang, their collectives differ ({procs}: "
                f"{', '.join(diff.collectives) or 'none'}; {ref}: {', '.join(diff.reference_collectives) or 'none'})"
                ", so they wait in ones that never match")
    elif diff.collectives:
        coll = (f" with the same collectives ({', '.join(diff.collectives)}): the likely cause of a hang where "
                "the difference changes what they exchange, else of processes silently computing different "
                "things")
    else:
        coll = " (no collectives in it: the processes compute different things)"
    return Finding(HANG, "program-mismatch", f"{title}: {procs} compiled a different program from {ref}{coll}{detail}",
                   diff.processes, function)


def _title(merged: MergedCompile) -> str:
    numbers = sorted({p.number for p in merged.processes})
    return f"{merged.function} compile {'/'.join(map(str, numbers))}"


def _names(indices: tuple[int, ...]) -> str:
    return ", ".join(f"p{i}" for i in indices)
