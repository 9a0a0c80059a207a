"""Spec records -> abstract JAX values (``jax.ShapeDtypeStruct``): nothing is allocated."""

from __future__ import annotations

import warnings
from typing import Any

from jitscope.load.objects import leaf_bytes
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


def is_abstract_leaf(value: Any) -> bool:
    """An abstract array (``jax.ShapeDtypeStruct``, as ``jax.eval_shape`` makes for a model or train state):
    a shape and dtype with no values. Only called where JAX is loaded."""
    import jax

    return isinstance(value, jax.ShapeDtypeStruct)


def _map(tree: Any, leaf_fn: Any, abstract_leaves: bool) -> Any:
    """``leaf_fn`` on every ArraySpec: plain containers keep their order (a dict as the user wrote it), and
    inside registered pytree nodes (an optax state, an equinox module rebuilt from a capture) JAX's own tree
    walk reaches the specs. ``abstract_leaves``: abstract arrays found there are handed to ``leaf_fn`` too."""

    def wanted(x: Any) -> bool:
        return isinstance(x, ArraySpec) or (abstract_leaves and is_abstract_leaf(x))

    def leaf(value: Any) -> Any:
        if isinstance(value, ArraySpec):
            return leaf_fn(value)
        if value is None or isinstance(value, (bool, int, float, complex, str)):
            return value
        import jax

        return jax.tree_util.tree_map(lambda x: leaf_fn(x) if wanted(x) else x, value, is_leaf=wanted)

    return map_containers(tree, leaf)


def map_specs(argset: ArgSet, leaf_fn: Any, *,
              abstract_leaves: bool = False) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Apply ``leaf_fn`` to every ArraySpec of ``argset``; literals pass through.

    ``abstract_leaves`` (where a concrete value is needed: bench, profile): every abstract array
    (``is_abstract_leaf``) at any depth, such as the leaves of a ``jax.eval_shape``'d TrainState or
    equinox module, is handed to ``leaf_fn`` as well; it has ``.shape`` and ``.dtype`` as a spec has.
    """
    return (_map(argset.args, leaf_fn, abstract_leaves),
            {k: _map(v, leaf_fn, abstract_leaves) for k, v in argset.kwargs.items()})


def input_bytes(argset: ArgSet) -> int:
    """Bytes of every array a concrete call of ``argset`` allocates: its specs and its abstract leaves."""
    sizes: list[int] = []

    def count(leaf: Any) -> Any:
        sizes.append(leaf.nbytes if isinstance(leaf, ArraySpec) else leaf_bytes(leaf))
        return leaf

    map_specs(argset, count, abstract_leaves=True)
    return sum(sizes)


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
