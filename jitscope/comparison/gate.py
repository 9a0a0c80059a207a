"""``--fail-on``: CI thresholds over a diff, e.g. ``flops>+10%,peak>+5%,new-collective,compile-time>+20%``.

A rule is ``METRIC>+N%`` (grew by more than N percent), ``METRIC>+N`` (grew by more than N, in the
metric's unit; bytes take KiB/MiB/GiB, counts k/M/G), or a flag: ``new-collective`` (any collective
added), ``new-collective-in-loop`` (one added inside a loop body), ``program-change`` (anything but
timings differs). ``runtime`` needs ``--bench`` and only counts a slowdown the bench calls beyond noise.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from jitscope.errors import BadValueError
from jitscope.model.diff import CallDiff, GateResult, Metric
from jitscope.units import fmt_bytes, fmt_change, fmt_duration, fmt_si

#: Metric names ``--fail-on`` takes (``comparison/compare.py`` makes a Metric of each), plus ``runtime``.
METRIC_NAMES: tuple[str, ...] = (
    "flops", "transcendentals", "bytes", "peak", "temp", "arguments", "outputs", "equations", "instructions",
    "fusions", "collectives", "comm-bytes", "trace-time", "lower-time", "compile-time", "runtime",
)
FLAGS: tuple[str, ...] = ("new-collective", "new-collective-in-loop", "program-change")

_RULE = re.compile(r"^\s*([a-z][a-z-]*)\s*>\s*\+?\s*([0-9]*\.?[0-9]+)\s*(%|[kmgt]i?b?|b)?\s*$", re.IGNORECASE)
_SCALE = {"": 1.0, "b": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "kib": 2.0**10, "mib": 2.0**20,
          "gib": 2.0**30, "tib": 2.0**40, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "ki": 2.0**10,
          "mi": 2.0**20, "gi": 2.0**30, "ti": 2.0**40}


@dataclass(frozen=True, slots=True)
class Rule:
    text: str
    metric: str  # a METRIC_NAMES entry or a FLAGS entry
    limit: float = 0.0
    relative: bool = False


def parse_rules(text: str, option: str = "--fail-on") -> tuple[Rule, ...]:
    """``flops>+10%,new-collective`` -> rules; a bad rule is one usage error naming it (and ``option``: the CLI's
    ``--fail-on``, the Python API's ``fail_on``)."""
    rules: list[Rule] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part.lower() in FLAGS:
            rules.append(Rule(part, part.lower()))
            continue
        match = _RULE.match(part)
        if match is None:
            raise BadValueError(f"{option}: cannot read {part!r}",
                             hint="write METRIC>+N% or METRIC>+N, or one of " + ", ".join(FLAGS))
        name, number, unit = match.group(1).lower(), float(match.group(2)), (match.group(3) or "").lower()
        if not math.isfinite(number):
            raise UsageError(f"--fail-on: {part!r} is not a finite threshold")
        if name not in METRIC_NAMES:
            raise BadValueError(f"{option}: unknown metric {name!r}", hint="metrics: " + ", ".join(METRIC_NAMES))
        if unit != "%" and unit not in _SCALE:
            raise BadValueError(f"{option}: unknown unit {unit!r} in {part!r}")
        rules.append(Rule(part, name, number / 100 if unit == "%" else number * _SCALE[unit], unit == "%"))
    if not rules:
        raise BadValueError(f"{option} names no threshold", hint="for example --fail-on 'flops>+10%,new-collective'")
    return tuple(rules)


def fmt_metric(metric: Metric, value: float | None) -> str:
    if metric.unit == "bytes":
        return fmt_bytes(value)
    if metric.unit == "seconds":
        return fmt_duration(value)
    if metric.unit == "flops":
        return fmt_si(value, "FLOP")
    return fmt_si(value)


def check(rules: tuple[Rule, ...], calls: tuple[CallDiff, ...]) -> tuple[GateResult, ...]:
    """Each rule against each call that traced on both sides; one result per rule and call crossed, or one
    passing result per rule."""
    results: list[GateResult] = []
    for rule in rules:
        crossed = [message for call in calls if not call.failed
                   for message in [_crossed(rule, call)] if message]
        many = len(calls) > 1
        if crossed:
            results += [GateResult(rule.text, True, m) for m in crossed]
        else:
            results.append(GateResult(rule.text, False, f"{rule.text}: within the limit" + (" in every call" if many
                                                                                        else "")))
    return tuple(results)


def _crossed(rule: Rule, call: CallDiff) -> str:
    where = f"{call.target}({call.call})"
    if rule.metric in ("new-collective", "new-collective-in-loop"):
        added = [c for c in call.collectives if c.kind == "added" and (c.in_loop or rule.metric == "new-collective")]
        if not added:
            return ""
        first = added[0]
        at = f" at {first.where}" if first.where else ""
        loop = " inside a loop body" if first.in_loop else ""
        more = f" (and {len(added) - 1} more)" if len(added) > 1 else ""
        return f"{where}: {rule.text}: {first.collective} {first.dtype}{list(first.shape)}{loop}{at} added{more}"
    if rule.metric == "program-change":
        return f"{where}: {rule.text}: the compiled program changed" if call.program_changed else ""
    if rule.metric == "runtime":
        bench = call.bench
        if bench is None or bench.verdict != "slower" or bench.ratio - 1 <= (rule.limit if rule.relative else -1):
            return ""
        return (f"{where}: runtime {fmt_change(bench.ratio - 1)} (cached call, median of {bench.rounds} alternating "
                f"rounds), over the +{rule.limit:.0%} limit" if rule.relative else "")
    metric = next((m for m in call.metrics if m.name == rule.metric), None)
    if metric is None or metric.old is None or metric.new is None:
        return ""
    grown = metric.change if rule.relative else metric.new - metric.old
    if grown is None:  # from zero to something: any growth crosses a relative limit
        grown = float("inf") if metric.new > metric.old else 0.0
    if grown <= rule.limit:
        return ""
    limit = f"+{rule.limit:.0%}" if rule.relative else "+" + fmt_metric(metric, rule.limit)
    delta = fmt_change(metric.change) if metric.change is not None else "+" + fmt_metric(metric, metric.new - metric.old)
    return (f"{where}: {metric.label} {delta} ({fmt_metric(metric, metric.old)} -> {fmt_metric(metric, metric.new)}), "
            f"over the {limit} limit")
