"""Where the device time of the costliest functions goes: ``jitscope profile``'s hottest line, as a finding.

Each function ``memory.calls_from_run`` picks (the plain-jit functions that cost the run the most, with
their last recorded call) is profiled as ``jitscope profile`` profiles a target (``profiling/runner.py``:
cached calls under the profiler, the device time split over the user's lines). The run does not count
cached calls (they never reach Python), so these findings are ranked apart, by device time per call, not
by seconds of the run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jitscope.errors import JitscopeError
from jitscope.model.common import Location
from jitscope.model.doctor import HOT_LINE, NOT_ESTIMATED, Finding
from jitscope.units import fmt_duration
from jitscope.userframes import display_path

if TYPE_CHECKING:
    from jitscope.doctor.memory import MemoryCall
    from jitscope.model.profile import LineRecord, ProfileRow

#: Functions profiled (each is a compile and a few dozen cached calls), and seconds for all of them.
MAX_FUNCTIONS, BUDGET_S = 2, 10.0
#: A line with less of its function's device time than this is not where the time goes.
MIN_SHARE = 0.2


def hot_lines(calls: Sequence[MemoryCall], budget_s: float = BUDGET_S) -> tuple[list[Finding], list[str]]:
    """Each profiled function's hottest line (most device time per call first), and notes."""
    from jitscope.profiling.runner import ProfileOptions, profile_calls

    findings: list[Finding] = []
    notes: list[str] = []
    started = time.perf_counter()
    for call in calls[:MAX_FUNCTIONS]:
        if time.perf_counter() - started > budget_s:
            notes.append(f"device time: {call.target.name} not profiled (doctor's {budget_s:.0f} s budget for it was "
                         f"spent): jitscope profile {call.target.name} shows it")
            continue
        try:
            report = profile_calls([(call.target, call.argset)], ProfileOptions(calls=10, budget=0.1))
        except JitscopeError as err:
            notes.append(f"device time: {call.target.name} could not be profiled: {err.message}")
            continue
        for row in report.rows:
            finding = _hottest(row, call.target.name)
            if finding is not None:
                findings.append(finding)
    findings.sort(key=lambda f: (-f.per_call_s, f.title))
    return findings, notes


def _hottest(row: ProfileRow, name: str) -> Finding | None:
    lines = [line for line in row.lines if line.in_function]
    total = row.device_time
    if not lines or total <= 0:
        return None
    top = lines[0]
    if top.share < MIN_SHARE:
        return None
    where = Location(display_path(top.location.file), top.location.line, top.location.function)
    return Finding(
        kind=HOT_LINE,
        title=f"{top.share:.0%} of `{name}`'s device time is this line ({fmt_duration(top.seconds)} of "
              f"{fmt_duration(total)} per call{_what(top)})",
        location=where, cost_s=0.0, per_call_s=top.seconds,
        change=f"{_command(name, where)} shows every line with its FLOP/s and bytes/s against the "
               f"device's peak, and the ops it ran in ({', '.join(top.hlo_ops[:2]) or 'see the ops table'})",
        gain_s=0.0, gain=NOT_ESTIMATED,
        gain_note="where the device time goes, per call; the run does not count cached calls, so not in seconds of the run",
        function=name, count=row.calls,
        evidence=tuple(f"{display_path(line.location.file)}:{line.location.line}: {line.share:.0%}, "
                       f"{fmt_duration(line.seconds)} per call" for line in lines[:3]))


def _command(name: str, where: Location) -> str:
    """The profile command for more: a target as given (``doctor module:fn``), a program's function from its run."""
    return f"jitscope profile {name}" if ":" in name else f"jitscope profile {where.file}:{name} --from-run"


def _what(line: LineRecord) -> str:
    return f": {', '.join(line.primitives[:3])}" if line.primitives else ""
