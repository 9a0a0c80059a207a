"""Calibration and the timed loops, driven by a FakeClock: no sleeping, exact answers."""

from __future__ import annotations

import dataclasses
import gc

import pytest

from jitscope.timing.calibrate import calibrate, ladder, target_round_seconds
from jitscope.timing.clock import FakeClock, clock_resolution
from jitscope.timing.loops import (
    blocked_round,
    dispatch_round,
    fresh_input_round,
    measure,
    run_rounds,
    warm_up,
)
from jitscope.timing.steady import default_max_warmup, relative_change, steady_note, warm_until_steady


def fake_round(clock: FakeClock, per_call: float):
    def time_round(loops: int) -> float:
        start = clock()
        clock.advance(loops * per_call)
        return clock() - start

    return time_round


def test_ladder_is_1_2_5():
    assert list(ladder(500)) == [1, 2, 5, 10, 20, 50, 100, 200, 500]


def test_calibrate_stops_at_first_loop_count_over_the_target():
    clock = FakeClock()
    cal = calibrate(fake_round(clock, 3e-6), min_round_seconds=1e-4)
    assert cal.loops == 50  # 20 calls = 60 us < 100 us; 50 calls = 150 us
    assert [loops for loops, _ in cal.tried] == [1, 2, 5, 10, 20, 50]
    assert abs(cal.round_seconds - 150e-6) < 1e-12


def test_calibrate_slow_call_needs_one_loop():
    clock = FakeClock()
    assert calibrate(fake_round(clock, 0.5), min_round_seconds=1e-3).loops == 1


def test_calibrate_gives_up_on_a_clock_that_never_moves():
    cal = calibrate(lambda loops: 0.0, min_round_seconds=1e-3, max_loops=1000)
    assert cal.loops == 1000


def test_target_round_is_far_above_resolution_and_splits_the_budget():
    assert target_round_seconds(1e-6, 0.0) == 1e-3  # 1000 x resolution
    assert target_round_seconds(1e-9, 5.0) == 0.1  # budget / 50
    assert target_round_seconds(1e-9, 0.001) == 1e-4  # the floor


def test_fake_clock_declares_its_resolution():
    assert clock_resolution(FakeClock(resolution=1e-6)) == 1e-6
    assert 0 < clock_resolution(__import__("time").perf_counter) < 1e-3


# Times below are binary fractions, so FakeClock arithmetic is exact.
def test_run_rounds_spends_the_budget_and_respects_min_rounds():
    clock = FakeClock()
    samples, spent = run_rounds(fake_round(clock, 2**-10), 8, budget=2**-4, min_rounds=3, clock=clock)
    assert samples == [2**-10] * 8  # each round is 2**-7 s of a 2**-4 s budget
    assert spent == 2**-4
    clock = FakeClock()
    samples, _ = run_rounds(fake_round(clock, 1.0), 1, budget=0.1, min_rounds=3, clock=clock)
    assert len(samples) == 3  # one round exceeds the budget, but min_rounds wins


def test_measure_reports_exact_per_call_time():
    clock = FakeClock()
    m = measure(fake_round(clock, 2**-19), budget=2**-5, min_rounds=5, resolution=1e-9, clock=clock)
    # target round = budget / 50 = 625 us; 200 calls take 381 us, 500 calls 954 us
    assert m.stats.loops == 500
    assert m.stats.median == m.stats.min == m.stats.max == 2**-19
    assert m.stats.rounds == 33  # ceil(2**-5 / (500 * 2**-19))
    assert m.warmup_calls >= 2
    assert [loops for loops, _ in m.calibration] == [1, 2, 5, 10, 20, 50, 100, 200, 500]


def test_measure_with_fixed_loops_skips_calibration():
    clock = FakeClock()
    m = measure(fake_round(clock, 2**-10), budget=2**-4, min_rounds=1, resolution=1e-9, clock=clock, loops=8)
    assert (m.stats.loops, m.stats.rounds, m.calibration) == (8, 8, ())


def test_warm_up_runs_for_its_time():  # the short warm-up before calibration
    clock = FakeClock()
    assert warm_up(fake_round(clock, 2**-6), seconds=2**-3, clock=clock) == 8
    assert warm_up(fake_round(clock, 1.0), seconds=0.0, clock=clock, min_calls=2) == 2


class Work:
    """A fake jitted function: calling costs ``call`` seconds, blocking on its output ``block``."""

    def __init__(self, clock: FakeClock, call: float, block: float) -> None:
        self.clock, self.call_cost, self.block_cost = clock, call, block
        self.gc_during_call: list[bool] = []
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.gc_during_call.append(gc.isenabled())
        self.calls += 1
        self.clock.advance(self.call_cost)
        return ("out", args, kwargs)

    def block(self, out):
        self.clock.advance(self.block_cost)
        return out


def test_blocked_round_includes_blocking_and_turns_gc_off():
    clock = FakeClock()
    work = Work(clock, call=1e-6, block=4e-6)
    assert gc.isenabled()
    seconds = blocked_round(work, (1, 2), {"k": 3}, work.block, clock)(10)
    assert abs(seconds - 10 * 5e-6) < 1e-12
    assert work.gc_during_call == [False] * 10
    assert gc.isenabled()


def test_dispatch_round_excludes_blocking():
    clock = FakeClock()
    work = Work(clock, call=1e-6, block=4e-6)
    seconds = dispatch_round(work, (), {}, work.block, clock)(10)
    assert abs(seconds - 10 * 1e-6) < 1e-12
    assert gc.isenabled()


def test_fresh_input_round_prepares_outside_the_timing():
    clock = FakeClock()
    work = Work(clock, call=1e-6, block=1e-6)
    prepared = []

    def prepare():
        clock.advance(1.0)  # expensive copies: must not be timed
        prepared.append(1)
        return (object(),), {}

    seconds = fresh_input_round(work, prepare, work.block, clock)(4)
    assert len(prepared) == 4
    assert abs(seconds - 4 * 2e-6) < 1e-12


def ramping_round(clock: FakeClock, per_call: list[float]):
    """A fake workload whose per-call time follows ``per_call`` round by round (the last value forever)."""
    done = [0]

    def time_round(loops: int) -> float:
        start = clock()
        clock.advance(loops * per_call[min(done[0], len(per_call) - 1)])
        done[0] += 1
        return clock() - start

    return time_round


def test_steady_at_once_costs_two_windows():
    clock = FakeClock()
    state, calls = warm_until_steady(fake_round(clock, 2**-10), 4, window_seconds=2**-6, max_seconds=2.0,
                                     clock=clock)
    assert (state.reached, state.windows, state.change) == (True, 2, 0.0)
    assert calls == 2 * 4 * 4  # each window: 4 rounds of 4 calls = 2**-6 s
    assert state.seconds == 2 * 2**-6


def test_steady_after_a_clock_ramp():
    clock = FakeClock()
    # rounds 0-5 at 2 ms, 6-11 at 1.5 ms, then 1 ms: windows of 6 rounds (window_seconds reached at round 6)
    ramp = [2**-9] * 6 + [1.5 * 2**-10] * 6 + [2**-10]
    state, _ = warm_until_steady(ramping_round(clock, ramp), 1, window_seconds=5.5 * 2**-10 * 2, max_seconds=2.0,
                                 clock=clock)
    assert state.reached and state.windows == 4  # 2 ms, 1.5 ms, 1 ms, 1 ms: the 4th agrees with the 3rd
    assert state.change == 0.0


def test_no_steady_state_within_the_cap():
    clock = FakeClock()
    ramp = ([2**-10] * 3 + [2**-9] * 3) * 1000  # windows of 3 rounds alternate between 1 ms and 2 ms per call
    state, _ = warm_until_steady(ramping_round(clock, ramp), 1, window_seconds=0.0, max_seconds=2**-5,
                                 clock=clock, min_window_rounds=3)
    assert not state.reached
    # windows take 3, 6, 3, 6, ... ms: 7 take 30 ms, under the 31.25 ms cap; the 8th ends past it
    assert (state.windows, state.seconds, state.change) == (8, 36 * 2**-10, 1.0)
    note = steady_note("cached calls", state)
    assert note is not None and note.startswith("cached calls: no steady state after") and "--max-warmup" in note
    assert steady_note("cached calls", dataclasses.replace(state, reached=True)) is None


def test_agreement_rule():
    assert relative_change(1.0, 1.05) == pytest.approx(0.05)
    assert relative_change(1.05, 1.0) == pytest.approx(0.05)  # symmetric: against the smaller
    assert relative_change(0.0, 0.0) == 0.0 and relative_change(0.0, 1.0) == float("inf")


def test_measure_records_the_steady_state():
    clock = FakeClock()
    m = measure(fake_round(clock, 2**-19), budget=2**-5, min_rounds=5, resolution=1e-9, clock=clock)
    assert m.steady is not None and m.steady.reached and m.steady.windows == 2


def test_default_warmup_cap_is_short_on_cpu():
    assert default_max_warmup(0.5, on_cpu=False) == 2.0  # GPU/TPU clocks ramp up under load
    assert default_max_warmup(0.5, on_cpu=True) == 0.25
    assert default_max_warmup(10.0, on_cpu=True) == 2.0
