"""Steady state: warm up until the time per call stops changing, or say that it did not.

A fixed warm-up is too short on accelerators: a GPU idles at low clocks and ramps them up
under load over hundreds of milliseconds to seconds, so rounds timed too early are slow
(on an H100, an f32 4096x4096 matmul read 1.3-1.5x a long hand-written loop after 0.5 s).
CPUs are steady at once, so the rule costs them two short windows.

The rule. After calibration, warm-up rounds of the calibrated loop count are timed in
windows; a window lasts at least ``budget / 20`` and at least 2 rounds. The function is in
a steady state when the per-call medians of two consecutive windows agree:
``|m[k] - m[k-1]| <= 5% x min(m[k], m[k-1])``. Warm-up gives up after ``max_seconds``
(``--max-warmup``; by default 2 s on GPU/TPU and half the budget on CPU); the timed rounds then still run, and the report says
the state was not reached (``steady_state.reached`` in JSON, a warning in text).
Pure apart from ``time_round`` and the clock, so a ``FakeClock`` test drives it exactly.
"""

from __future__ import annotations

from collections.abc import Callable

from jitscope.model.bench import SteadyState
from jitscope.timing.clock import Clock
from jitscope.timing.stats import median

#: Two windows agree when their medians differ by at most this fraction of the smaller one.
TOLERANCE = 0.05
#: A window lasts at least this share of the budget ...
WINDOW_SHARE = 1 / 20
#: ... and at least this many rounds.
MIN_WINDOW_ROUNDS = 2
#: Safety stop for a clock that never moves.
MAX_WINDOW_ROUNDS = 10_000
#: Default cap on warm-up while waiting for a steady state on an accelerator, in seconds.
MAX_WARMUP = 2.0
#: On CPU the cap is this share of the budget (at most MAX_WARMUP): CPUs are steady at once when
#: the machine is quiet, and on a busy one waiting longer buys nothing but time.
CPU_WARMUP_SHARE = 0.5


def default_max_warmup(budget: float, on_cpu: bool) -> float:
    """``--max-warmup`` when not given: 2 s on GPU/TPU (clock ramps), half the budget on CPU."""
    return min(MAX_WARMUP, budget * CPU_WARMUP_SHARE) if on_cpu else MAX_WARMUP


def relative_change(previous: float, current: float) -> float:
    """|current - previous| / min(previous, current); 0 for two zeros, infinite against a zero."""
    low = min(previous, current)
    if low <= 0:
        return 0.0 if previous == current else float("inf")
    return abs(current - previous) / low


def warm_until_steady(
    time_round: Callable[[int], float], loops: int, *, window_seconds: float, max_seconds: float, clock: Clock,
    tolerance: float = TOLERANCE, min_window_rounds: int = MIN_WINDOW_ROUNDS,
) -> tuple[SteadyState, int]:
    """Time windows of rounds until two consecutive medians agree or ``max_seconds`` pass.

    Returns the outcome and the number of calls made. At least two windows are always timed.
    """
    start = clock()
    previous: float | None = None
    change: float | None = None
    windows = calls = 0
    while True:
        samples: list[float] = []
        window_start = clock()
        while len(samples) < MAX_WINDOW_ROUNDS and (
                len(samples) < min_window_rounds or clock() - window_start < window_seconds):
            samples.append(time_round(loops) / loops)
            calls += loops
        current = median(samples)
        windows += 1
        if previous is not None:
            change = relative_change(previous, current)
            if change <= tolerance:
                return SteadyState(True, windows, clock() - start, change, tolerance), calls
        previous = current
        if windows >= 2 and clock() - start >= max_seconds:
            return SteadyState(False, windows, clock() - start, change, tolerance), calls


def steady_note(what: str, state: SteadyState | None) -> str | None:
    """A warning for the report when ``state`` says warm-up ended without a steady state."""
    if state is None or state.reached:
        return None
    differ = f"the last two windows differed by {state.change:.0%}; " if state.change is not None else ""
    return (f"{what}: no steady state after {state.seconds:.2g} s of warm-up ({differ}they must agree within "
            f"{state.tolerance:.0%}); a GPU may still have been ramping up its clocks, or other work was "
            "competing for the machine: raise --max-warmup, or close other programs")
