"""``doctor --fail-on``: a CI gate on what the run wasted, e.g. ``waste>10%`` or ``waste>2s``."""

from __future__ import annotations

import math
import re

from jitscope.errors import UsageError
from jitscope.model.doctor import DoctorReport
from jitscope.units import fmt_duration

_GATE = re.compile(r"^\s*waste\s*>\s*([0-9.eE+-]+)\s*(%|s|ms)\s*$")


def parse_fail_on(text: str) -> tuple[float, str]:
    """``waste>10%`` -> (0.10, "%"); ``waste>2s`` -> (2.0, "s"); one error line for anything else."""
    match = _GATE.match(text)
    value = None
    if match is not None:
        try:
            value = float(match.group(1))
        except ValueError:
            value = None
    if match is None or value is None or not math.isfinite(value) or value < 0:
        raise UsageError(f"--fail-on {text!r} is not a gate doctor knows",
                         hint="write waste>N% (a share of the run's wall time) or waste>Ns / waste>Nms")
    unit = match.group(2)
    if unit == "%":
        if value > 100:
            raise UsageError(f"--fail-on {text!r}: a share is at most 100%", hint="for example waste>10%")
        return value / 100, "%"
    return (value / 1000 if unit == "ms" else value), "s"


def gate_failure(report: DoctorReport, gate: tuple[float, str]) -> str | None:
    """Why the gate fails, in one line, or None when the run is within it."""
    limit, unit = gate
    if unit == "%":
        if report.avoidable_share > limit:
            return (f"avoidable {report.avoidable_share:.0%} of the run's {fmt_duration(report.wall_s)} "
                    f"is over --fail-on waste>{limit:.0%}")
        return None
    if report.avoidable_s > limit:
        return f"avoidable {fmt_duration(report.avoidable_s)} is over --fail-on waste>{fmt_duration(limit)}"
    return None
