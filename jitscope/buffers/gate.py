"""``--fail-over BYTES``: ``12GiB``, ``500MB``, ``1e9`` -> bytes (pure)."""

from __future__ import annotations

import math
import re

from jitscope.errors import UsageError

_AMOUNT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([kmgt]i?b?|b)?\s*$", re.IGNORECASE)
_SCALE = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9, "t": 10**12,
          "tb": 10**12, "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30,
          "ti": 2**40, "tib": 2**40}


def parse_bytes(text: str, option: str = "--fail-over") -> int:
    """``12GiB`` -> 12884901888; KiB/MiB/GiB/TiB are powers of 2, kB/MB/GB/TB of 10; one usage error otherwise."""
    match = _AMOUNT.match(text)
    if match is None:
        raise UsageError(f"{option}: cannot read {text!r} as a size", hint="write bytes, or e.g. 512MiB, 12GiB, 2GB")
    value = float(match.group(1)) * _SCALE[(match.group(2) or "").lower()]
    if not (math.isfinite(value) and value > 0):  # 1e400 reads as infinity: a gate nothing could pass
        raise UsageError(f"{option}: {text!r} is not a finite positive size", hint="write e.g. 512MiB, 12GiB, 2GB")
    return int(value)
