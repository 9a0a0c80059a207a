"""The profile reports of every process of one ``profile --processes`` run, lined up call by call.

Each process timed the same calls in lockstep (``ProfileOptions.lockstep_rounds``) and ran the same
number under the profiler; per call, each process's device time and its compute/communication split
are put side by side, then its top source lines, each with every process's time and the skew
(slowest / fastest, and who). In one SPMD program the processes meet in every collective, so a slow
process's extra time shows as compute on it and as collective time (waiting) on the others: the
straggler is the one with the most compute, and that is the skew named first.

A skew is flagged when it is beyond the processes' own spread (the widest q3/q1 of any process's
cached rounds, as ``hosts/bench.py`` judges cached calls) and the difference is at least
``MIN_SHARE`` of the slowest process's device time, so that microsecond lines are not called out.
"""

from __future__ import annotations

from collections.abc import Sequence

from jitscope.hosts.merge import failed_finding
from jitscope.hosts.reports import group_calls, load_process_reports
from jitscope.model.hosts import (
    SLOW,
    BenchSkew,
    Finding,
    LineFigures,
    MergedLine,
    MergedProfileCall,
    ProfileMergeReport,
    ProfileTotals,
)
from jitscope.model.profile import PROFILE_KIND, LineRecord, ProfileReport, ProfileRow
from jitscope.units import fmt_duration

#: Source lines listed per call: the union of every process's top lines, this many at most.
TOP_LINES = 10
#: A skew counts only when the difference is at least this share of the slowest process's device time.
MIN_SHARE = 0.05


def load_profile_reports(paths: Sequence[str]) -> list[tuple[str, ProfileReport]]:
    """Every process's profile report, by process index, checked to be one run's."""
    return load_process_reports(paths, ProfileReport, PROFILE_KIND, "profile")


def merge_profile(loaded: Sequence[tuple[str, ProfileReport]]) -> ProfileMergeReport:
    """The merged report (``loaded`` sorted by process index, from ``load_profile_reports`` or a launch)."""
    processes, rows, failed, keys = group_calls(loaded)
    calls = [_merged_call(key, rows.get(key, {}), tuple(failed.get(key, ()))) for key in keys]
    first = loaded[0][1]
    count = first.process.count if first.process else len(loaded)
    return ProfileMergeReport(process_count=count, processes=tuple(processes), calls=tuple(calls),
                              findings=tuple(_findings(calls, count)), rounds=first.settings.lockstep_rounds,
                              captured=first.settings.calls, min_share=MIN_SHARE)


def totals(index: int, row: ProfileRow) -> ProfileTotals:
    """Device time per call on one process, split by what the ops do (``OpRecord.category``)."""
    by_category: dict[str, float] = {}
    for op in row.ops:
        by_category[op.category] = by_category.get(op.category, 0.0) + op.seconds
    compute, collective = by_category.pop("compute", 0.0), by_category.pop("collective", 0.0)
    return ProfileTotals(process=index, device_s=row.device_time, compute_s=compute, collective_s=collective,
                         other_s=sum(by_category.values()), measured_s=row.cached.median,
                         measured_q1_s=row.cached.q1, measured_q3_s=row.cached.q3,
                         reconciles=row.reconciliation.reconciles)


def skew(values: dict[int, float], spread: float, min_difference: float) -> BenchSkew | None:
    """Slowest / fastest of ``values`` (by process; processes with none left out), flagged beyond ``spread``
    when the difference is at least ``min_difference`` seconds (pure)."""
    timed = {p: v for p, v in values.items() if v > 0}
    if len(timed) < 2:
        return None
    fastest = min(timed, key=lambda p: (timed[p], p))
    slowest = max(timed, key=lambda p: (timed[p], -p))
    ratio = timed[slowest] / timed[fastest]
    flagged = ratio > spread and timed[slowest] - timed[fastest] >= min_difference
    return BenchSkew(round(ratio, 4), fastest, slowest, round(spread, 4), flagged)


def _merged_call(key: tuple[str, str, str], rows: dict[int, ProfileRow],
                 failed_on: tuple[int, ...]) -> MergedProfileCall:
    order = sorted(rows)
    sums = tuple(totals(index, rows[index]) for index in order)
    spread = max((t.measured_q3_s / t.measured_q1_s if t.measured_q1_s > 0 else 1.0 for t in sums), default=1.0)
    floor = MIN_SHARE * max((t.device_s for t in sums), default=0.0)
    lines = _lines(rows, order, spread, floor)
    return MergedProfileCall(target=key[0], call=key[1], label=key[2], totals=sums,
                             device=skew({t.process: t.device_s for t in sums}, spread, floor),
                             compute=skew({t.process: t.compute_s for t in sums}, spread, floor),
                             lines=lines, failed_on=failed_on)


def _lines(rows: dict[int, ProfileRow], order: list[int], spread: float, floor: float) -> tuple[MergedLine, ...]:
    """The union of every process's top lines, most time (on any process) first."""
    seconds: dict[tuple[str, int], dict[int, tuple[float, float]]] = {}
    found: dict[tuple[str, int], LineRecord] = {}
    for index in order:
        for line in rows[index].lines:
            key = (line.location.file, line.location.line)
            seconds.setdefault(key, {})[index] = (line.seconds, line.share)
            found.setdefault(key, line)
    top = sorted(seconds, key=lambda k: (-max(s for s, _ in seconds[k].values()), k))[:TOP_LINES]
    out = []
    for key in top:
        by_process = seconds[key]
        figures = tuple(LineFigures(index, *by_process.get(index, (0.0, 0.0))) for index in order)
        out.append(MergedLine(location=found[key].location, figures=figures,
                              skew=skew({f.process: f.seconds for f in figures}, spread, floor),
                              in_function=found[key].in_function))
    return tuple(out)


def call_name(call: MergedProfileCall) -> str:
    return f"{call.target.rsplit(':', 1)[-1]}({call.call})"


def _findings(calls: Sequence[MergedProfileCall], count: int) -> list[Finding]:
    out: list[Finding] = []
    for call in calls:
        name = call_name(call)
        if call.failed_on:
            out.append(failed_finding("profile-failed", name, call.failed_on, count, call.target))
        by_process = {t.process: t for t in call.totals}
        if call.compute is not None and call.compute.flagged:
            s = call.compute
            slow, fast = by_process[s.slowest], by_process[s.fastest]
            waits = f"; p{s.fastest} spends {fmt_duration(fast.collective_s)} in collectives (waiting for it " \
                    f"included), p{s.slowest} {fmt_duration(slow.collective_s)}" if fast.collective_s > 0 else ""
            out.append(Finding(SLOW, "compute-straggler",
                               f"p{s.slowest} is the straggler in {name}: {fmt_duration(slow.compute_s)} of compute "
                               f"per call, {s.ratio:.2f}x p{s.fastest}'s {fmt_duration(fast.compute_s)}{waits}",
                               (s.slowest,), call.target))
        elif call.device is not None and call.device.flagged:
            s = call.device
            out.append(Finding(SLOW, "device-straggler",
                               f"p{s.slowest} is the straggler in {name}: {fmt_duration(by_process[s.slowest].device_s)}"
                               f" of device time per call, {s.ratio:.2f}x p{s.fastest}'s "
                               f"{fmt_duration(by_process[s.fastest].device_s)}", (s.slowest,), call.target))
        for line in call.lines:
            if line.skew is None or not line.skew.flagged:
                continue
            s = line.skew
            figures = {f.process: f for f in line.figures}
            where = f"{line.location.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line.location.line}"
            out.append(Finding(SLOW, "line-straggler",
                               f"{name}: p{s.slowest} spends {fmt_duration(figures[s.slowest].seconds)} per call at "
                               f"{where}, {s.ratio:.2f}x p{s.fastest}'s {fmt_duration(figures[s.fastest].seconds)}, "
                               f"beyond the processes' own spread (rounds within {s.spread:.2f}x, q3/q1)",
                               (s.slowest,), call.target))
    return out
