"""The skew rule of profile --processes (pure): beyond the processes' own spread, and not a microsecond apart."""

from __future__ import annotations

from jitscope.hosts.profile import skew


def test_a_skew_beyond_the_spread_and_the_floor_is_flagged() -> None:
    s = skew({0: 0.001, 1: 0.020}, spread=1.5, min_difference=0.001)
    assert s is not None and (s.slowest, s.fastest, s.flagged) == (1, 0, True) and s.ratio == 20.0


def test_a_skew_within_the_spread_is_not() -> None:
    s = skew({0: 0.010, 1: 0.012}, spread=1.5, min_difference=0.0)
    assert s is not None and s.flagged is False and s.slowest == 1


def test_a_tiny_line_is_not_flagged_however_wide() -> None:
    s = skew({0: 2e-6, 1: 7e-6}, spread=1.2, min_difference=0.0005)
    assert s is not None and s.ratio == 3.5 and s.flagged is False


def test_processes_with_no_time_are_left_out() -> None:
    assert skew({0: 0.0, 1: 0.003}, spread=1.0, min_difference=0.0) is None
    s = skew({0: 0.0, 1: 0.003, 2: 0.001}, spread=1.0, min_difference=0.0)
    assert s is not None and (s.fastest, s.slowest) == (2, 1)
