"""``--compare BASELINE.json --fail-if-slower 10%``: regressions of cached-call median, compile time
or the device memory the program needs.

Rows are matched by target and call. A metric regresses when the current value exceeds
the baseline by more than the threshold; it improves when it is below by more than the
threshold. Rows only in one report are listed as ``new`` or ``missing`` and never fail.
The memory metric is XLA's own account of the compiled program (arguments + outputs +
temporaries - donated, from ``compiled.memory_analysis()``): no run is needed and it does
not vary between runs, so a growth beyond the threshold is the program's, not noise.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

from jitscope.errors import UsageError
from jitscope.model.bench import (
    BENCH_KIND,
    BENCH_SCHEMA_VERSION,
    MEMORY_METRIC,
    BenchReport,
    BenchRow,
    ComparisonEntry,
    ComparisonRecord,
    Environment,
)


def _needed_bytes(row: BenchRow) -> float | None:
    peak = row.memory.peak_bytes if row.memory is not None else None
    return float(peak) if peak is not None else None


#: metric name -> how to read it from a row
METRICS: dict[str, Callable[[BenchRow], float | None]] = {
    "cached median": lambda row: row.cached.blocked.median,
    "compile": lambda row: row.cold.median.compile,
    MEMORY_METRIC: _needed_bytes,
}
#: metric name -> the field of a row it reads, as a baseline's error names it
GATED_FIELDS = {"cached median": "cached.blocked.median", "compile": "cold.median.compile",
                MEMORY_METRIC: "memory.peak_bytes"}
#: Environment keys that make timings incomparable when they differ.
_ENV_KEYS = ("backend", "device_kind", "device_count", "jax", "jaxlib")


def parse_threshold(text: str) -> float:
    """``"10%"`` -> 0.10; ``"0.1"`` -> 0.10. Must be positive."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UsageError(f"bad --fail-if-slower {text!r}", hint="use a percentage like 10%") from None
    if not (math.isfinite(value) and value > 0):  # 1e400% is infinity: a gate nothing could fail
        raise UsageError(f"--fail-if-slower must be a finite positive number, got {text!r}")
    return value


def load_report(path: Path) -> BenchReport:
    """Read a saved ``jitscope bench --format json`` / ``--save`` document: every field checked, and every
    number the gate compares finite and positive (a median of 0, -1 or NaN could never regress)."""
    from jitscope.inputs import read_json, read_record, require

    data = read_json(path, "baseline")
    if not isinstance(data, dict) or data.get("kind") != BENCH_KIND:
        raise UsageError(f"baseline {path} is not a jitscope bench report", hint="write one with --save FILE")
    major = str(data.get("schema_version", "")).split(".")[0]
    if major != BENCH_SCHEMA_VERSION.split(".")[0]:
        raise UsageError(f"baseline {path} has schema {data.get('schema_version')}, this jitscope writes "
                         f"{BENCH_SCHEMA_VERSION}", hint="re-create the baseline with this version")
    report = read_record(BenchReport, data, "baseline", path)
    for at, row in enumerate(report.rows):
        for metric, field in GATED_FIELDS.items():
            value = METRICS[metric](row)
            ok = value is None or (math.isfinite(value) and (value > 0 or metric == MEMORY_METRIC and value == 0))
            require(ok, "baseline", path, f"rows[{at}].{field}", f"is {value}, expected a positive number")
    return dataclasses.replace(report, environment=typed_environment(report.environment))


def typed_environment(env: Environment) -> Environment:
    """Schema 1.0 wrote ``device_count`` and ``x64`` as strings; read them as an int and a bool."""
    out = dict(env)
    count, x64 = out.get("device_count"), out.get("x64")
    if isinstance(count, str) and count.isdigit():
        out["device_count"] = int(count)
    if isinstance(x64, str) and x64.lower() in ("true", "false"):
        out["x64"] = x64.lower() == "true"
    return out


def _status(baseline: float | None, current: float | None, threshold: float) -> tuple[float | None, str]:
    if baseline is None and current is None:
        return None, "same"
    if baseline is None:
        return None, "new"
    if current is None:
        return None, "missing"
    if baseline <= 0:  # a clock that did not tick: no ratio to judge
        return None, "same"
    change = current / baseline - 1
    if change > threshold:
        return change, "regression"
    if change < -threshold:
        return change, "improvement"
    return change, "same"


def compare(current: BenchReport, baseline: BenchReport, *, threshold: float, baseline_name: str = "") -> ComparisonRecord:
    """Compare every metric of every row of ``current`` with ``baseline``."""
    old = {row.key: row for row in baseline.rows}
    entries: list[ComparisonEntry] = []
    for row in current.rows:
        base = old.get(row.key)
        for metric, read in METRICS.items():
            value = read(row)
            if metric == MEMORY_METRIC and value is None and (base is None or read(base) is None):
                continue  # not measured on either side (an older report, a failed analysis)
            if base is None:
                entries.append(ComparisonEntry(row.key, metric, None, value, None, "new"))
                continue
            before = read(base)
            change, status = _status(before, value, threshold)
            entries.append(ComparisonEntry(row.key, metric, before, value, change, status))
    seen = {row.key for row in current.rows}
    for key, gone in old.items():
        if key not in seen:
            entries.append(ComparisonEntry(key, "cached median", METRICS["cached median"](gone), None, None,
                                           "missing"))
    notes = [
        f"{k} differs: baseline {baseline.environment.get(k)}, now {current.environment.get(k)}"
        for k in _ENV_KEYS
        if baseline.environment.get(k) != current.environment.get(k)
    ]
    return ComparisonRecord(
        baseline=baseline_name,
        threshold=threshold,
        entries=tuple(entries),
        regressions=sum(1 for e in entries if e.status == "regression"),
        notes=tuple(notes),
    )
