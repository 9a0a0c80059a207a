"""Spec records -> abstract JAX values (``jax.ShapeDtypeStruct``): nothing is allocated."""

from __future__ import annotations

import warnings
from typing import Any

from jitscope.load.specs import ArgSet, ArraySpec, iter_array_specs

_WIDE = {"float64", "int64", "uint64", "complex128"}


def map_containers(tree: Any, leaf_fn: Any) -> Any:
    """``leaf_fn`` applied below plain dicts, lists, tuples and named tuples (rebuilt as the same type).

    Any other object (an optax state class, a flax FrozenDict or TrainState, an equinox module) is a
    leaf here, handed to ``leaf_fn`` whole: rebuilding it from its items could break it.
    """
    kind = type(tree)
    if kind is dict:
        return {k: map_containers(v, leaf_fn) for k, v in tree.items()}
    if kind is list or kind is tuple:
        return kind(map_containers(v, leaf_fn) for v in tree)
    if isinstance(tree, tuple) and hasattr(kind, "_fields"):  # a NamedTuple (optax states)
        return kind(*(map_containers(v, leaf_fn) for v in tree))
    return leaf_fn(tree)


def _map(tree: Any, leaf_fn: Any) -> Any:
    """``leaf_fn`` on every ArraySpec: plain containers keep their order (a dict as the user wrote it), and
    inside registered pytree nodes (an optax state, an equinox module rebuilt from a capture) JAX's own tree
    walk reaches the specs."""

    def leaf(value: Any) -> Any:
        if isinstance(value, ArraySpec):
            return leaf_fn(value)
        if value is None or isinstance(value, (bool, int, float, complex, str)):
            return value
        import jax

        return jax.tree_util.tree_map(lambda x: leaf_fn(x) if isinstance(x, ArraySpec) else x, value,
                                      is_leaf=lambda x: isinstance(x, ArraySpec))

    return map_containers(tree, leaf)


def map_specs(argset: ArgSet, leaf_fn: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Apply ``leaf_fn`` to every ArraySpec of ``argset``; literals pass through."""
    return _map(argset.args, leaf_fn), {k: _map(v, leaf_fn) for k, v in argset.kwargs.items()}


def warn_if_x64_disabled(argset: ArgSet) -> str | None:
    """A warning when 64-bit dtypes are asked for but JAX will silently use 32-bit ones."""
    import jax

    if jax.config.read("jax_enable_x64"):
        return None
    wide = sorted({s.dtype for s in iter_array_specs((argset.args, argset.kwargs)) if s.dtype in _WIDE})
    if not wide:
        return None
    return (
        f"{', '.join(wide)} requested but 64-bit types are disabled in JAX, which will use 32-bit types; "
        "set JAX_ENABLE_X64=1 (or pass --x64) to trace with 64-bit types"
    )


def to_abstract(argset: ArgSet) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Positional and keyword arguments as ShapeDtypeStructs (statics unchanged)."""
    import jax

    from jitscope.jaxcompat.dtypes import jax_dtype

    def leaf(spec: ArraySpec) -> Any:
        sharding = leaf_sharding(spec)
        dtype = jax_dtype(spec.dtype)  # typed keys (key<fry>) and float0 too, which jnp.dtype refuses
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the x64 truncation warning is reported once by us
            if sharding is None:
                return jax.ShapeDtypeStruct(spec.shape, dtype, weak_type=spec.weak_type)
            return jax.ShapeDtypeStruct(spec.shape, dtype, weak_type=spec.weak_type, sharding=sharding)

    return map_specs(argset, leaf)


def leaf_sharding(spec: ArraySpec) -> Any:
    """The ``NamedSharding`` of a spec with ``@(...)`` on the active mesh; None when it has none."""
    if spec.sharding is None:
        return None
    from jitscope.load.mesh import sharding_for

    return sharding_for(spec)
