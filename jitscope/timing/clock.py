"""Clocks: the real one, and a fake one that only moves when a test says so.

Timing code takes any ``Clock`` (a zero-argument callable returning seconds), as
pyinstrument does, so calibration and budget logic are tested without sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]

#: The clock used for every real measurement: monotonic, the finest the platform has.
perf_clock: Clock = time.perf_counter


class FakeClock:
    """A clock for tests: reading it returns ``now``; ``advance`` (or a fake workload) moves it.

    ``tick`` is added on every read, to model the cost of reading the clock itself.
    """

    def __init__(self, start: float = 0.0, tick: float = 0.0, resolution: float = 1e-9) -> None:
        self.now = start
        self.tick = tick
        self.resolution = resolution
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        value = self.now
        self.now += self.tick
        return value

    def advance(self, seconds: float) -> None:
        self.now += seconds


def clock_name(clock: Clock) -> str:
    if clock is time.perf_counter:
        return "perf_counter"
    return getattr(clock, "__name__", type(clock).__name__)


def clock_resolution(clock: Clock, *, points: int = 20, max_reads: int = 200_000) -> float:
    """The smallest step the clock was seen to make between two reads (pytest-benchmark's method).

    The clock's declared resolution (1 ns for ``perf_counter`` on Linux) is not what timing
    code gets: reading it costs tens of nanoseconds. A clock with a ``resolution`` attribute
    (``FakeClock``) is trusted as is.
    """
    declared = getattr(clock, "resolution", None)
    if isinstance(declared, float):
        return declared
    best = float("inf")
    seen = 0
    previous = clock()
    for _ in range(max_reads):
        current = clock()
        delta = current - previous
        previous = current
        if delta > 0:
            best = min(best, delta)
            seen += 1
            if seen >= points:
                break
    if best == float("inf"):
        info = time.get_clock_info("perf_counter")
        return float(info.resolution)
    return best
