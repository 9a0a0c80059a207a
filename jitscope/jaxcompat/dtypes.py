"""JAX dtype objects for recorded dtype names, and concrete values of the dtypes NumPy cannot make.

A spec, a report or a capture names a dtype as JAX prints it (``float32``, ``bfloat16``, ``float0``,
``key<fry>``; see :mod:`jitscope.dtypes`). ``jnp.dtype`` knows the NumPy and ml_dtypes names, but not
the extended ones: a typed PRNG key's dtype is made by JAX from its implementation, and ``float0``
is a structured NumPy dtype that ``jnp.dtype("float0")`` refuses. This module is the one place that
turns any of those names back into a dtype, and makes a key array from random key data.
"""

from __future__ import annotations

import functools
from typing import Any

from jitscope.dtypes import KEY_TAGS, ML_DTYPES, dtype_name, key_tag
from jitscope.errors import SpecError


def jax_dtype(name: str) -> Any:
    """The dtype object for ``name``: ``jax.ShapeDtypeStruct(shape, jax_dtype(name))`` is the spec's value."""
    tag = key_tag(name)
    if tag is not None:
        return key_dtype(key_impl_name(tag))
    import jax
    import jax.numpy as jnp

    if name == "float0":
        return jax.dtypes.float0
    try:
        return jnp.dtype(name)
    except TypeError:
        raise SpecError(f"this JAX ({jax.__version__}) has no dtype {name!r}",
                        hint="use a dtype it knows, such as float32, bfloat16 or key<fry>") from None


@functools.cache
def has_dtype(name: str) -> bool:
    """Whether the installed JAX has the dtype ``name`` (one of ``ML_DTYPES``; NumPy's and the extended ones it
    always has): JAX exports each narrow float or integer it supports from ``jax.numpy`` (``jnp.int2``)."""
    if name not in ML_DTYPES:
        return True
    import jax.numpy as jnp

    return hasattr(jnp, name)


def canonical_dtype_name(dtype: Any) -> str:
    """The name of the dtype JAX gives an argument of ``dtype``: a NumPy int64 array is int32 to jit when x64
    is off (``jax.dtypes.canonicalize_dtype``, which refuses extended dtypes: those are kept)."""
    import jax

    if is_extended(dtype):
        return dtype_name(dtype)
    return dtype_name(jax.dtypes.canonicalize_dtype(dtype))


def key_impl_name(tag: str) -> str | None:
    """The PRNG implementation (``threefry2x32``) of a key tag (``fry``); None for "", JAX's default."""
    if not tag:
        return None  # jax.random's impl=None: jax_default_prng_impl, read when the key is made
    impls = key_implementations()
    if tag in impls:
        return impls[tag]
    known = ", ".join(f"key<{t}> ({name})" for t, name in impls.items())
    raise SpecError(f"unknown PRNG key implementation key<{tag}>",
                    hint=f"this JAX has {known}; key[] is its default")


@functools.cache
def key_implementations() -> dict[str, str]:
    """Tag -> name of every PRNG implementation this JAX has (its registry, else the ones jitscope knows)."""
    try:  # the registry moved from jax._src.prng (0.4.x) to jax._src.random.prng
        from jax._src.random import prng
    except ImportError:
        try:
            from jax._src import prng  # type: ignore[no-redef]
        except ImportError:
            prng = None  # type: ignore[assignment]
    registry = getattr(prng, "prngs", None)
    if isinstance(registry, dict) and registry:
        return {str(impl.tag): str(name) for name, impl in registry.items()}
    return {tag: name for name, tag in KEY_TAGS.items()}


@functools.cache
def key_dtype(impl: str | None) -> Any:
    """The dtype of a key array of implementation ``impl`` (``key<fry>``), made abstractly (nothing runs)."""
    import jax

    return jax.eval_shape(functools.partial(jax.random.key, 0, impl=impl)).dtype


def make_keys(name: str, shape: tuple[int, ...], rng: Any) -> Any:
    """A key array of dtype ``name`` and ``shape``, its key data drawn from the NumPy generator ``rng``
    (every bit pattern is a valid key for JAX's implementations, so a seed gives the same keys everywhere)."""
    import jax
    import numpy as np

    impl = key_impl_name(key_tag(name) or "")
    data_shape = jax.eval_shape(lambda: jax.random.key_data(jax.random.key(0, impl=impl))).shape
    data = rng.integers(0, 2**32, size=tuple(shape) + tuple(data_shape), dtype=np.uint32)
    return jax.random.wrap_key_data(data, impl=impl)


def is_extended(dtype: Any) -> bool:
    """A dtype NumPy cannot hold: a typed key (``float0`` is a NumPy dtype, of zero-size elements)."""
    return key_tag(dtype_name(dtype)) is not None
