"""Dtype names: the spec language's short ones (``f32``) against NumPy's (``float32``), and bytes per element.

Plain tables with no imports, at the bottom of the house: the spec parser (``load/specs.py``),
object summaries (``load/objects.py``) and the JAX adapter (``jaxcompat/values.py``) all name
dtypes the same way through them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Short dtype names accepted in specs, mapped to numpy names.
SHORT_DTYPES: dict[str, str] = {
    "bf16": "bfloat16",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "bool": "bool",
    "pred": "bool",
    "c64": "complex64",
    "c128": "complex128",
}
#: numpy name -> short name, for display.
SHORT_NAMES: dict[str, str] = {v: k for k, v in SHORT_DTYPES.items() if k != "pred"}
#: Extra numpy-style names (ml_dtypes) that jax understands.
EXTRA_DTYPES: frozenset[str] = frozenset(
    {"float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz", "int4", "uint4"}
)
#: Bytes per element, by NumPy name (sub-byte types as fractions).
ITEMSIZE: dict[str, float] = {
    "bool": 1, "int4": 0.5, "uint4": 0.5, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4,
    "uint32": 4, "int64": 8, "uint64": 8, "bfloat16": 2, "float16": 2, "float32": 4, "float64": 8,
    "complex64": 8, "complex128": 16,
}  # fmt: skip


def array_nbytes(shape: Sequence[int], dtype: str) -> int:
    """Bytes of an array of ``shape`` and ``dtype`` (a NumPy name; unknown names count one byte per element)."""
    return math.ceil(math.prod(shape) * ITEMSIZE.get(dtype, 1))
