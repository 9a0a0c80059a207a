"""Dtype names: the spec language's short ones (``f32``) against NumPy's (``float32``), JAX's extended
dtypes (typed PRNG keys ``key<fry>``, ``float0``), and bytes per element.

Plain tables and functions that import neither JAX nor the rest of jitscope (NumPy only to name a
scalar type), at the bottom of the house: the spec parser (``load/specs.py``), object summaries
(``load/objects.py``), captures (``run/signature.py``) and the JAX adapter (``jaxcompat/values.py``,
``jaxcompat/dtypes.py``) all name dtypes the same way through them. A name is what JAX prints in a
jaxpr (``bfloat16``, ``key<fry>``, ``float0``), so a spec written from a report or a capture reads
back as the same dtype.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

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
#: Bytes per element, by NumPy name (sub-byte types as fractions, as XLA packs them); every name here,
#: and the ``key<...>`` forms, is a dtype a spec may name.
ITEMSIZE: dict[str, float] = {
    "bool": 1, "int2": 0.25, "uint2": 0.25, "int4": 0.5, "uint4": 0.5, "int8": 1, "uint8": 1, "int16": 2,
    "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "float4_e2m1fn": 0.5, "float8_e3m4": 1,
    "float8_e4m3": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3b11fnuz": 1, "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1, "bfloat16": 2, "float16": 2, "float32": 4, "float64": 8,
    "complex64": 8, "complex128": 16, "float0": 0,
}  # fmt: skip

#: The names above that NumPy lacks: JAX takes them from ml_dtypes, each from some JAX version on (JAX 0.4.38
#: has no float8_e8m0fnu, int2 or uint2), so a spec naming one asks the installed JAX (``jaxcompat.dtypes``).
ML_DTYPES = frozenset(name for name in ITEMSIZE if name.startswith(("float8_", "float4_", "int2", "uint2", "int4",
                                                                     "uint4", "bfloat16")))

#: An array must be smaller than this many bytes (a ``bool`` counts one): XLA computes sizes in bytes as int64, and
#: an array near 2**63 bytes aborts the process inside XLA (issue 25: f32[2**61]; issue 30: bool[2**62]). Arrays far
#: bigger than any machine holds still trace, lower and compile as abstract values.
MAX_ARRAY_BYTES = 2**62

#: Typed PRNG keys: JAX names a key array's dtype ``key<TAG>`` by its implementation's tag. A spec writes
#: ``key<fry>[4]`` as JAX prints it, or ``key[4]`` for JAX's default implementation
#: (``jax_default_prng_impl``).
KEY = "key"
#: Implementation name -> the tag JAX prints (jax.random.key(0, impl=NAME).dtype is key<TAG>).
KEY_TAGS: dict[str, str] = {"threefry2x32": "fry", "rbg": "rbg", "unsafe_rbg": "urbg", "threefry4x32": "fry4",
                            "philox2x32": "phx2", "philox4x32": "phx4"}
#: Bytes per key, by tag: its key data is uint32[2] for threefry2x32, uint32[4] for rbg ...
KEY_ITEMSIZE: dict[str, int] = {"fry": 8, "rbg": 16, "urbg": 16, "fry4": 16, "phx2": 4, "phx4": 8}
#: JAX's default implementation, threefry2x32: the size of a ``key[...]`` spec.
DEFAULT_KEY_TAG = "fry"


def key_tag(name: str) -> str | None:
    """``"fry"`` for ``"key<fry>"``, ``""`` for ``"key"`` (JAX's default implementation), None for any
    name that is not a typed key's."""
    if name == KEY:
        return ""
    if name.startswith(KEY + "<") and name.endswith(">") and len(name) > len(KEY) + 2:
        return name[len(KEY) + 1 : -1]
    return None


def is_key(name: str) -> bool:
    """A typed PRNG key's dtype name (``key<fry>``, ``key``)."""
    return key_tag(name) is not None


def canonical_dtype(name: str) -> str | None:
    """The name a spec keeps for a dtype written ``name`` (short, NumPy, ``key<TAG>``), or None if unknown.

    A key's tag may also be its implementation's name: ``key<threefry2x32>`` is ``key<fry>``.
    """
    tag = key_tag(name)
    if tag == "":
        return KEY
    if tag is not None:
        tag = KEY_TAGS.get(tag, tag)
        return f"{KEY}<{tag}>" if tag.isidentifier() else None
    lowered = name.lower()
    if lowered in SHORT_DTYPES:
        return SHORT_DTYPES[lowered]
    if lowered in ITEMSIZE:
        return lowered
    return None


def itemsize(name: str) -> float:
    """Bytes per element of the dtype named ``name`` (unknown names count one byte)."""
    tag = key_tag(name)
    if tag is not None:
        return KEY_ITEMSIZE.get(tag or DEFAULT_KEY_TAG, KEY_ITEMSIZE[DEFAULT_KEY_TAG])
    return ITEMSIZE.get(name, 1)


def array_nbytes(shape: Sequence[int], dtype: str) -> int:
    """Bytes of an array of ``shape`` and ``dtype`` (a name as :func:`dtype_name` gives it)."""
    return math.ceil(math.prod(shape) * itemsize(dtype))


def dtype_name(dtype: Any) -> str:
    """The name of any dtype object as JAX prints it: ``float32``, ``bfloat16``, ``key<fry>``, ``float0``.

    ``np.dtype(x).name`` is wrong for two of JAX's dtypes: it refuses extended ones (a typed key's
    ``key<fry>``: "Cannot interpret as a data type") and calls ``float0`` "void". A name given as a
    string is kept; a scalar type (``np.float32``, ``jnp.bfloat16``) is named by its dtype.
    """
    if isinstance(dtype, str):
        return dtype
    if getattr(dtype, "names", None) == ("float0",):  # jax.dtypes.float0: a structured NumPy dtype
        return "float0"
    name = getattr(dtype, "name", None)
    if isinstance(name, str) and not isinstance(dtype, type):
        return name
    import numpy as np  # a scalar type: np.float32 -> float32

    try:
        return dtype_name(np.dtype(dtype))
    except TypeError:
        return str(dtype)


def python_scalar_dtype(value: complex, x64: bool = False) -> str:
    """The dtype JAX gives a Python scalar argument (weak-typed, of its kind's default width)."""
    bits = "64" if x64 else "32"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "i" + bits
    if isinstance(value, float):
        return "f" + bits
    return "c128" if x64 else "c64"


def short_name(name: str) -> str:
    """The spec language's name for a dtype name: ``f32`` for ``float32``; others (``key<fry>``) as is."""
    return SHORT_NAMES.get(name, name)
