"""Summary statistics of timing samples. Pure: no jax, no clock, tested on fixed inputs.

Quartiles use linear interpolation between order statistics (``statistics.quantiles``
with ``method="inclusive"``, the same as ``numpy.percentile``'s default), so q1/median/q3
of a sample are reproducible by hand. Outliers are counted two ways, as pytest-benchmark
does: outside 1.5 IQR of the quartiles, and outside one standard deviation of the mean.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from jitscope.model.bench import TimingStats

#: A run is flagged unreliable when its slowest round took this many times the fastest.
UNRELIABLE_RATIO = 4.0


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """(q1, median, q3) by linear interpolation; a single value is all three."""
    if not values:
        raise ValueError("quartiles of no values")
    if len(values) == 1:
        v = float(values[0])
        return v, v, v
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return float(q1), float(q2), float(q3)


def is_unreliable(lo: float, hi: float) -> bool:
    """max >= 4 x min. A zero minimum means the clock did not tick: unreliable unless all are zero."""
    if lo <= 0:
        return hi > 0
    return hi >= UNRELIABLE_RATIO * lo


def summarize(
    samples: Sequence[float], loops: int = 1, *, total_seconds: float | None = None, keep_samples: bool = True
) -> TimingStats:
    """Statistics of per-call ``samples`` (one per round of ``loops`` calls)."""
    if not samples:
        raise ValueError("no samples to summarize")
    data = [float(s) for s in samples]
    q1, mid, q3 = quartiles(data)
    iqr = q3 - q1
    mean = math.fsum(data) / len(data)
    stddev = statistics.stdev(data) if len(data) > 1 else 0.0
    lo_fence, hi_fence = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    lo, hi = min(data), max(data)
    return TimingStats(
        rounds=len(data),
        loops=loops,
        min=lo,
        max=hi,
        mean=mean,
        stddev=stddev,
        median=mid,
        q1=q1,
        q3=q3,
        iqr=iqr,
        outliers_iqr=sum(1 for x in data if x < lo_fence or x > hi_fence),
        outliers_stddev=sum(1 for x in data if x < mean - stddev or x > mean + stddev),
        total_seconds=total_seconds if total_seconds is not None else math.fsum(data) * loops,
        unreliable=is_unreliable(lo, hi),
        samples=tuple(data) if keep_samples else (),
    )


def median_or_none(values: Sequence[float | None]) -> float | None:
    """Median of the values that are not None, or None if there are none."""
    present = [v for v in values if v is not None]
    return median(present) if present else None
