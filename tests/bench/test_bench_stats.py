"""Statistics on fixed samples: every expected value can be checked by hand."""

from __future__ import annotations

import math

import pytest

from jitscope.timing.stats import is_unreliable, median, median_or_none, quartiles, summarize


def test_quartiles_interpolate_linearly_like_numpy():
    # positions (n-1)*p: 1.75 -> 2 + 0.75*(3-2); 3.5 -> (4+5)/2; 5.25 -> 6 + 0.25*(7-6)
    assert quartiles([1, 2, 3, 4, 5, 6, 7, 8]) == (2.75, 4.5, 6.25)
    assert quartiles([3, 1, 2]) == (1.5, 2.0, 2.5)
    assert quartiles([7.0]) == (7.0, 7.0, 7.0)


def test_summarize_fixed_sample():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0], loops=10)
    assert (s.rounds, s.loops, s.calls) == (5, 10, 50)
    assert (s.min, s.max, s.median) == (1.0, 100.0, 3.0)
    assert (s.q1, s.q3, s.iqr) == (2.0, 4.0, 2.0)
    assert s.mean == 22.0
    assert s.stddev == pytest.approx(math.sqrt(((21**2) + 20**2 + 19**2 + 18**2 + 78**2) / 4))
    assert s.outliers_iqr == 1  # 100 > q3 + 1.5 * IQR = 7
    assert s.outliers_stddev == 1  # only 100 is beyond mean +/- stddev (22 +/- 43.6)
    assert s.total_seconds == 110.0 * 10
    assert s.unreliable  # 100 >= 4 x 1
    assert s.samples == (1.0, 2.0, 3.0, 4.0, 100.0)


def test_summarize_tight_sample_is_reliable_and_keeps_given_total():
    s = summarize([2.0, 2.0, 2.0, 2.0], loops=1, total_seconds=8.5, keep_samples=False)
    assert (s.stddev, s.iqr, s.outliers_iqr, s.outliers_stddev) == (0.0, 0.0, 0, 0)
    assert not s.unreliable
    assert s.total_seconds == 8.5
    assert s.samples == ()


def test_single_round_has_zero_spread():
    s = summarize([0.5])
    assert (s.min, s.max, s.median, s.q1, s.q3, s.stddev) == (0.5, 0.5, 0.5, 0.5, 0.5, 0.0)


def test_unreliable_threshold_is_max_at_least_four_times_min():
    assert not is_unreliable(1.0, 3.99)
    assert is_unreliable(1.0, 4.0)
    assert is_unreliable(0.0, 1e-9)  # the clock never moved for the fastest round
    assert not is_unreliable(0.0, 0.0)


def test_median_helpers():
    assert median([3.0, 1.0, 2.0, 10.0]) == 2.5
    assert median_or_none([None, 4.0, None, 2.0]) == 3.0
    assert median_or_none([None]) is None
    with pytest.raises(ValueError):
        summarize([])
