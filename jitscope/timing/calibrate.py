"""How many calls per round: timeit's autorange, on a 1-2-5 ladder.

A round must last far above the clock's resolution (so quantisation error is below
0.1%) and long enough that the budget yields a useful number of rounds, but no longer:
more rounds give better quartiles. ``calibrate`` is pure given ``time_round``, so a test
drives it with a fake clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: A round lasts at least this many clock resolutions: quantisation error <= 1/PRECISION_FACTOR.
PRECISION_FACTOR = 1000
#: The budget is split into about this many rounds when calls are short enough.
TARGET_ROUNDS = 50
#: Never time fewer than this in a round, whatever the budget (clock-read overhead stays < 1%).
MIN_ROUND_SECONDS = 1e-4
#: Safety stop, e.g. for a clock that never moves.
MAX_LOOPS = 10_000_000


@dataclass(frozen=True, slots=True)
class Calibration:
    loops: int
    round_seconds: float  # duration of the last calibration round (loops calls)
    tried: tuple[tuple[int, float], ...]  # (loops, seconds) for every calibration round


def ladder(limit: int = MAX_LOOPS) -> Iterator[int]:
    """1, 2, 5, 10, 20, 50, ... up to ``limit``."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            n = step * scale
            if n > limit:
                return
            yield n
        scale *= 10


def target_round_seconds(resolution: float, budget: float) -> float:
    """How long one round should last for this clock and budget."""
    return max(PRECISION_FACTOR * resolution, budget / TARGET_ROUNDS, MIN_ROUND_SECONDS)


def calibrate(
    time_round: Callable[[int], float], *, min_round_seconds: float, max_loops: int = MAX_LOOPS
) -> Calibration:
    """Grow the loop count 1, 2, 5, 10, ... until ``time_round(loops)`` lasts ``min_round_seconds``."""
    tried: list[tuple[int, float]] = []
    loops, seconds = 1, 0.0
    for loops in ladder(max_loops):
        seconds = time_round(loops)
        tried.append((loops, seconds))
        if seconds >= min_round_seconds:
            break
    return Calibration(loops=loops, round_seconds=seconds, tried=tuple(tried))
