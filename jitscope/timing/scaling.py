"""How run time and compile time grow with input size. Pure: records in, records out.

Rows of the same target and the same static values form a series; with at least two
distinct input sizes, the least-squares slope of log(time) against log(bytes) says how
the time grows: about 1 for work proportional to the input, 0 for a dispatch-bound call,
1.5 for a matmul of square matrices (n^3 work for n^2 inputs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from jitscope.model.bench import BenchRow, ScalingPoint, ScalingRecord


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Least-squares slope of log(y) on log(x); None without two distinct positive x."""
    pairs = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len({px for px, _ in pairs}) < 2:
        return None
    mx = sum(px for px, _ in pairs) / len(pairs)
    my = sum(py for _, py in pairs) / len(pairs)
    sxx = sum((px - mx) ** 2 for px, _ in pairs)
    sxy = sum((px - mx) * (py - my) for px, py in pairs)
    return sxy / sxx


def _variant(row: BenchRow) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(row.statics.items()))


def scaling_records(rows: Sequence[BenchRow]) -> tuple[ScalingRecord, ...]:
    """One ScalingRecord per (target, statics) series with two or more input sizes."""
    series: dict[tuple[str, str], list[BenchRow]] = {}
    for row in rows:
        series.setdefault((row.target, _variant(row)), []).append(row)
    out: list[ScalingRecord] = []
    for (target, variant), members in series.items():
        if len({r.input_bytes for r in members if r.input_bytes > 0}) < 2:
            continue
        points = tuple(
            ScalingPoint(r.call, r.input_bytes, r.cached.blocked.median, r.cold.median.compile)
            for r in sorted(members, key=lambda r: r.input_bytes)
        )
        compile_pts = [p for p in points if p.compile_seconds is not None]
        out.append(ScalingRecord(
            target=target,
            variant=variant,
            points=points,
            run_slope=loglog_slope([p.input_bytes for p in points], [p.run_seconds for p in points]),
            compile_slope=loglog_slope([p.input_bytes for p in compile_pts],
                                       [p.compile_seconds or 0.0 for p in compile_pts]),
        ))
    return tuple(out)
