"""One formatter for every size, duration and count a person reads."""

from __future__ import annotations

import pytest

from jitscope.units import (
    fmt_bytes,
    fmt_change,
    fmt_count,
    fmt_duration,
    fmt_rate,
    fmt_si,
    plural,
    sig3,
)


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"), (3 << 20, "3 MiB"),
     (1023 * 1024, "1023 KiB"), (int(74.5 * 2**30), "74.5 GiB"), (None, "n/a")],
)
def test_bytes_are_binary_with_three_significant_digits(n: int | None, text: str) -> None:
    assert fmt_bytes(n) == text


def test_durations_counts_and_rates() -> None:
    assert [fmt_duration(x) for x in (2.5, 0.0123, 0.0785, 4.56e-6, 3.2e-8, 0.0, None, float("nan"))] == [
        "2.5 s", "12.3 ms", "78.5 ms", "4.56 µs", "32 ns", "0 ns", "n/a", "n/a"]
    assert [fmt_count(x) for x in (2999.4, 10, 1.5, 0.123, None)] == ["2,999", "10", "1.5", "0.123", "n/a"]
    assert [fmt_si(x) for x in (2e9, 1.95e6, 999.0, 12.0)] == ["2 G", "1.95 M", "999", "12"]
    assert fmt_rate(2.5e9, "FLOP") == "2.5 GFLOP/s"
    assert fmt_change(0.125) == "+12.5%" and fmt_change(None) == "n/a"
    assert [sig3(x) for x in (100.4, 12.34, 1.0, 0.5, 0.01234)] == ["100", "12.3", "1", "0.5", "0.0123"]
    assert plural(1, "file") == "1 file" and plural(2000, "line") == "2,000 lines"


def test_chart_values_and_shares() -> None:
    from jitscope.units import fmt_fraction, fmt_share, fmt_value

    assert [fmt_value(v, unit) for v, unit in ((0.0123, "seconds"), (2048, "bytes"), (2999.4, ""))] == [
        "12.3 ms", "2 KiB", "2,999"]
    assert [fmt_share(1, 8), fmt_share(3, 0)] == ["12%", "n/a"]
    assert [fmt_fraction(0.125), fmt_fraction(0.004), fmt_fraction(0.0)] == ["12%", "<1%", "0%"]
    assert fmt_bytes(1000 * 2**20) == "1000 MiB"  # the runtime-error formatter it replaced said 1e+03 MiB
