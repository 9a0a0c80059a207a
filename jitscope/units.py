"""Every number a person reads: byte sizes, durations, counts and rates, formatted in one place.

Three significant digits everywhere (``1.5 KiB``, ``12.3 ms``, ``2 GFLOP/s``), trailing zeros
dropped, never an exponent; byte sizes in binary units, as XLA's memory analysis reports them;
``n/a`` for a figure that does not exist (None or NaN). Imports nothing, so analysis code may
use it for messages too.
"""

from __future__ import annotations

import math

NA = "n/a"

_BINARY = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
_TIME = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"))
_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def sig3(value: float) -> str:
    """``value`` with three significant digits, no exponent, no trailing zeros: 1.5, 12.3, 123, 1024."""
    magnitude = abs(value)
    if magnitude >= 100 or magnitude == 0:
        return f"{value:.0f}"
    digits = 1 if magnitude >= 10 else 2 if magnitude >= 1 else 2 - math.floor(math.log10(magnitude))
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_bytes(n: float | None) -> str:
    """``512 B``, ``1.5 KiB``, ``3 MiB``, ``74.5 GiB``; ``n/a`` for None."""
    if n is None or _missing(n):
        return NA
    for unit, scale in _BINARY:
        if abs(n) >= scale:
            return f"{sig3(n / scale)} {unit}"
    return f"{int(n)} B"


def fmt_duration(seconds: float | None) -> str:
    """``2.5 s``, ``12.3 ms``, ``4.56 µs``, ``32 ns``; ``n/a`` for None or NaN."""
    if seconds is None or _missing(seconds):
        return NA
    for scale, unit in _TIME:
        if abs(seconds) >= scale:
            return f"{sig3(seconds / scale)} {unit}"
    return f"{sig3(seconds * 1e9)} ns"


def fmt_si(value: float | None, unit: str = "") -> str:
    """A quantity with an SI prefix: ``2 G`` (flops), ``1.2 MFLOP``; ``n/a`` for None."""
    if value is None or _missing(value):
        return NA
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{sig3(value / scale)} {prefix}{unit}".rstrip()
    return f"{sig3(value)} {unit}".rstrip()


def fmt_rate(value: float | None, unit: str) -> str:
    """Per second, with an SI prefix: ``2.5 GFLOP/s``, ``12 B/s``."""
    return NA if value is None or _missing(value) else fmt_si(value, unit + "/s")


def fmt_count(value: float | None) -> str:
    """How many times: ``2,999`` (grouped, whole) from 10 up, ``1.5`` below; ``n/a`` for None."""
    if value is None or _missing(value):
        return NA
    return f"{value:,.0f}" if value >= 10 else sig3(value)


def fmt_value(value: float | None, unit: str) -> str:
    """A chart value in its unit (``seconds``, ``bytes``, else a count)."""
    if unit == "seconds":
        return fmt_duration(value)
    if unit == "bytes":
        return fmt_bytes(value)
    return fmt_count(value)


def fmt_share(part: float, whole: float) -> str:
    """``part`` as a whole percentage of ``whole``: ``12%``; ``n/a`` when ``whole`` is not positive."""
    return f"{100 * part / whole:.0f}%" if whole > 0 else NA


def fmt_fraction(share: float) -> str:
    """A share given as a fraction of 1: ``12%``; ``<1%`` for a small share that is not zero (a hot-spot table
    should not claim ``0%`` for work that took time)."""
    return f"{share:.0%}" if share >= 0.01 or share == 0 else "<1%"


def fmt_slope(value: float | None) -> str:
    """A fitted log-log slope: two decimals."""
    return NA if value is None or _missing(value) else f"{value:.2f}"


def fmt_change(value: float | None) -> str:
    """A relative change: ``+12.5%``, ``-3.0%``."""
    return NA if value is None or _missing(value) else f"{value:+.1%}"


def plural(n: int, word: str) -> str:
    """``1 finding``, ``2,000 findings``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"
