"""The timed loops: warm-up, calibration, warm-up to a steady state, then rounds until the budget is spent.

Nothing here imports jax: the call, the function that blocks on its outputs and the
clock are passed in, so the same code times a jitted function, the eager function,
an empty harness, or (in tests) a fake workload on a ``FakeClock``.

Garbage collection is off inside each timed round (as in ``timeit``): a collection
triggered by the harness's own allocations would land on a random round. It is
switched back on between rounds, so garbage still gets collected.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jitscope.model.bench import SteadyState, TimingStats
from jitscope.timing.calibrate import MAX_LOOPS, calibrate, target_round_seconds
from jitscope.timing.clock import Clock
from jitscope.timing.stats import summarize
from jitscope.timing.steady import MAX_WARMUP, WINDOW_SHARE, warm_until_steady

#: A round of ``loops`` calls -> seconds it took.
RoundTimer = Callable[[int], float]
Block = Callable[[Any], Any]
Call = Callable[..., Any]
#: Safety stop for very cheap calls and long budgets.
MAX_ROUNDS = 100_000


class _GcOff:
    __slots__ = ("was_enabled",)

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was_enabled:
            gc.enable()


def blocked_round(fn: Call, args: Sequence[Any], kwargs: dict[str, Any], block: Block, clock: Clock) -> RoundTimer:
    """Time ``loops`` calls, each one blocked on all of its outputs before the next starts."""
    args = tuple(args)

    def time_round(loops: int) -> float:
        with _GcOff():
            if kwargs:
                start = clock()
                for _ in range(loops):
                    block(fn(*args, **kwargs))
                return clock() - start
            start = clock()
            for _ in range(loops):
                block(fn(*args))
            return clock() - start

    return time_round


def dispatch_round(fn: Call, args: Sequence[Any], kwargs: dict[str, Any], block: Block, clock: Clock) -> RoundTimer:
    """Time only until each call returns; its outputs are waited for outside the timed region."""
    args = tuple(args)

    def time_round(loops: int) -> float:
        total = 0.0
        with _GcOff():
            for _ in range(loops):
                start = clock()
                out = fn(*args, **kwargs)
                total += clock() - start
                block(out)
        return total

    return time_round


def fresh_input_round(
    fn: Call, prepare: Callable[[], tuple[tuple[Any, ...], dict[str, Any]]], block: Block, clock: Clock
) -> RoundTimer:
    """For donated arguments: ``loops`` fresh input sets are made first, untimed, then the calls are timed."""

    def time_round(loops: int) -> float:
        inputs = [prepare() for _ in range(loops)]
        with _GcOff():
            start = clock()
            for args, kwargs in inputs:
                block(fn(*args, **kwargs))
            return clock() - start

    return time_round


def warm_up(time_round: RoundTimer, *, seconds: float, clock: Clock, min_calls: int = 2,
            max_calls: int = 10_000) -> int:
    """Call until ``seconds`` have passed (and at least ``min_calls``); returns the number of calls."""
    start = clock()
    calls = 0
    while calls < max_calls and (calls < min_calls or clock() - start < seconds):
        time_round(1)
        calls += 1
    return calls


def run_rounds(
    time_round: RoundTimer, loops: int, *, budget: float, min_rounds: int, clock: Clock,
    max_rounds: int = MAX_ROUNDS,
) -> tuple[list[float], float]:
    """Rounds until ``budget`` seconds have passed and at least ``min_rounds`` were timed.

    Returns the per-call time of each round and the total time spent inside timed rounds.
    """
    samples: list[float] = []
    spent = 0.0
    start = clock()
    while len(samples) < max_rounds:
        if len(samples) >= min_rounds and clock() - start >= budget:
            break
        seconds = time_round(loops)
        samples.append(seconds / loops)
        spent += seconds
    return samples, spent


def paired_rounds(
    first: RoundTimer, second: RoundTimer, loops: int, *, budget: float, min_rounds: int, clock: Clock,
    max_rounds: int = MAX_ROUNDS,
) -> tuple[list[float], list[float], float]:
    """Pairs of rounds of two calls, one round of each, which goes first alternating, so both see the same
    background load (a difference of two figures measured minutes apart is mostly noise on a busy machine).

    Returns the per-call time of each round of ``first`` and of ``second`` (pair by pair), and the total time
    spent inside timed rounds.
    """
    ones: list[float] = []
    twos: list[float] = []
    spent = 0.0
    start = clock()
    while len(ones) < max_rounds:
        if len(ones) >= min_rounds and clock() - start >= budget:
            break
        if len(ones) % 2:
            two = second(loops)
            one = first(loops)
        else:
            one = first(loops)
            two = second(loops)
        ones.append(one / loops)
        twos.append(two / loops)
        spent += one + two
    return ones, twos, spent


@dataclass(frozen=True, slots=True)
class Measured:
    stats: TimingStats
    warmup_calls: int
    calibration: tuple[tuple[int, float], ...]
    steady: SteadyState | None = None


def measure(
    time_round: RoundTimer, *, budget: float, min_rounds: int, resolution: float, clock: Clock,
    loops: int | None = None, max_loops: int = MAX_LOOPS, max_warmup: float = MAX_WARMUP,
) -> Measured:
    """Warm up, calibrate the loop count (unless ``loops`` is given), warm up until steady, time rounds, summarise.

    The first two calls pay one-off costs (buffer allocation, caches) before calibration
    sees them; the steady-state warm-up (``jitscope.timing.steady``) then runs at the
    calibrated loop count, so its windows are the rounds that will be timed.
    """
    warm = warm_up(time_round, seconds=0.0, clock=clock)
    tried: tuple[tuple[int, float], ...] = ()
    if loops is None:
        cal = calibrate(time_round, min_round_seconds=target_round_seconds(resolution, budget), max_loops=max_loops)
        loops, tried = cal.loops, cal.tried
    steady, steady_calls = warm_until_steady(time_round, loops, window_seconds=budget * WINDOW_SHARE,
                                             max_seconds=max_warmup, clock=clock)
    samples, spent = run_rounds(time_round, loops, budget=budget, min_rounds=min_rounds, clock=clock)
    return Measured(summarize(samples, loops, total_seconds=spent), warm + steady_calls, tried, steady)
