"""Why did it recompile? Cache keys of a call sequence, and every component that changed.

JAX keys its compile cache on the call's signature: which arguments are passed by
position or keyword, each argument's pytree structure, every leaf's shape, dtype and
weak_type, and the value of every static argument. JAX's own
``jax_explain_cache_misses`` reports a single "closest key" guess; here we list *all*
components that differ from the nearest earlier compile (the one with the fewest
differences), computed from the argument specs. The key components and the diff come
from ``cachekeys``, which ``jitscope run`` uses too, so both report causes alike. ``observe_sequence`` also traces the
calls on one jit wrapper and counts how often the function body really ran, so a
predicted recompilation is confirmed (or a surprising one, e.g. hidden global state,
is caught).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jitscope.dtypes import python_scalar_dtype, short_name
from jitscope.jaxcompat.jit import NO_LEAVES, is_static_leaf
from jitscope.load.partition import format_partition
from jitscope.load.specs import ArgSet, ArraySpec
from jitscope.model.keys import KeyDiff
from jitscope.tracing import cachekeys
from jitscope.tracing.cachekeys import Key, diff

__all__ = ["CallRecord", "KeyDiff", "SequenceRecord", "analyse_sequence", "cache_key", "diff"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call of a sequence: did it compile, and if it recompiled, why."""

    index: int  # 1-based position in the sequence
    call: str
    compiles: bool
    #: The earlier call whose compile is nearest (fewest differing components); for a cache hit, the
    #: call with the same key; 0 for the first compile.
    nearest: int = 0
    diffs: tuple[KeyDiff, ...] = ()
    #: Other earlier calls exactly as near as ``nearest`` (the cause is then one of several).
    ties: tuple[int, ...] = ()
    #: True when tracing confirmed the prediction (the body ran iff a compile was predicted).
    observed: bool | None = None


@dataclass(frozen=True, slots=True)
class SequenceRecord:
    target: str
    calls: tuple[CallRecord, ...]

    @property
    def compiles(self) -> int:
        return sum(c.compiles for c in self.calls)


def _leaves(path: str, value: Any) -> list[tuple[str, Any]]:
    if value is None:  # a pytree node with no children for JAX
        return []
    if isinstance(value, dict):
        return [leaf for k, v in sorted(value.items(), key=str) for leaf in _leaves(f"{path}[{k!r}]", v)]
    if isinstance(value, (list, tuple)):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(f"{path}[{i}]", v)]
    return [(path, value)]


def _add_leaf(key: Key, path: str, leaf: Any, x64: bool, static_leaves: str = NO_LEAVES,
              statics: cachekeys.StaticValues | None = None) -> None:
    if statics is not None and is_static_leaf(leaf, static_leaves):
        # the wrapper makes this leaf static (equinox: a Python float lr): its value is in the key
        cachekeys.add_static(key, path, leaf, statics)
    elif isinstance(leaf, ArraySpec):
        dtype = short_name(leaf.dtype)
        sharding = None if leaf.sharding is None else format_partition(leaf.sharding)
        cachekeys.add_array(key, path, leaf.shape, dtype, leaf.weak_type, sharding, x64=x64)
    elif isinstance(leaf, (bool, int, float, complex)):
        # A Python scalar is traced as a weak-typed 0-d array of its kind's default dtype, so
        # it shares a cache entry with an f32[] weak-typed array (JAX keys on avals only).
        cachekeys.add_array(key, path, (), python_scalar_dtype(leaf, x64), True, x64=x64)
    else:
        cachekeys.add_other(key, path, leaf)


def x64_enabled() -> bool:
    """Whether JAX keeps 64-bit dtypes (``jax_enable_x64``), read only when a key is built."""
    import jax

    return bool(jax.config.read("jax_enable_x64"))


def cache_key(argset: ArgSet, param_names: list[str], static_names: tuple[str, ...],
              static_nums: tuple[int, ...] = (), *, statics: cachekeys.StaticValues | None = None,
              x64: bool | None = None, static_leaves: str = NO_LEAVES) -> Key:
    """The components of JAX's compile-cache key for one call, as readable strings.

    Keys compared with each other must share one ``statics`` (it tells equal static
    values from distinct ones); ``x64`` defaults to JAX's current setting. ``static_leaves``
    is the wrapper's rule for leaves it makes static (``JitOptions.static_leaves``): their
    values are in the key, and objects (an equinox module) are keyed leaf by leaf.
    """
    statics = cachekeys.StaticValues() if statics is None else statics
    wide = x64_enabled() if x64 is None else x64
    key: Key = {}
    named = [(param_names[i] if i < len(param_names) else f"args[{i}]", v, i) for i, v in enumerate(argset.args)]
    for name, value, index in named:
        cachekeys.add_passed(key, name, keyword=False)
        _add_argument(key, name, value, name in static_names or index in static_nums, statics, wide, static_leaves)
    for name, value in argset.kwargs.items():
        cachekeys.add_passed(key, name, keyword=True)
        _add_argument(key, name, value, name in static_names, statics, wide, static_leaves)
    return key


def _add_argument(key: Key, name: str, value: Any, static: bool, statics: cachekeys.StaticValues,
                  x64: bool, static_leaves: str) -> None:
    if static:
        cachekeys.add_static(key, name, value, statics)
        return
    cachekeys.add_structure(key, name, cachekeys.structure(value))
    for path, leaf in _leaves(name, value):
        if static_leaves == NO_LEAVES:
            _add_leaf(key, path, leaf, x64)
            continue
        import jax

        # an object the wrapper takes (an equinox module, an nnx model) is a pytree: keyed leaf by leaf
        for inner, item in jax.tree_util.tree_flatten_with_path(leaf)[0]:
            _add_leaf(key, path + jax.tree_util.keystr(inner), item, x64, static_leaves, statics)


def analyse_sequence(target: str, argsets: tuple[ArgSet, ...], param_names: list[str],
                     static_names: tuple[str, ...], static_nums: tuple[int, ...] = (), *,
                     x64: bool | None = None, static_leaves: str = NO_LEAVES) -> SequenceRecord:
    """Predict which calls compile, and why, from their cache keys."""
    wide = x64_enabled() if x64 is None else x64
    values = cachekeys.StaticValues()
    compiled: list[tuple[int, Key]] = []
    calls = []
    for index, argset in enumerate(argsets, start=1):
        statics = tuple(dict.fromkeys(static_names + argset.static_names))
        key = cache_key(argset, param_names, statics, static_nums, statics=values, x64=wide,
                        static_leaves=static_leaves)
        same = next((i for i, k in compiled if k == key), 0)
        if same:
            calls.append(CallRecord(index, argset.describe(), compiles=False, nearest=same))
            continue
        near = cachekeys.nearest(compiled, key)
        if near is not None:
            calls.append(CallRecord(index, argset.describe(), True, near.labels[0], near.diffs, near.labels[1:]))
        else:
            calls.append(CallRecord(index, argset.describe(), compiles=True))
        compiled.append((index, key))
    return SequenceRecord(target, tuple(calls))


def analyse_target(target: Any, argsets: tuple[ArgSet, ...] | list[ArgSet]) -> SequenceRecord:
    """``analyse_sequence`` for a loaded target: its parameter names and jit options (its wrapper's rules)."""
    from jitscope.load.target import parameter_names

    options = target.options
    return analyse_sequence(target.name, tuple(argsets), parameter_names(target.fn), options.static_argnames,
                            options.static_argnums, static_leaves=options.static_leaves)


def cache_hits(target: Any, argsets: tuple[ArgSet, ...] | list[ArgSet]) -> list[int]:
    """For each call of ``target``'s sequence, the earlier call (1-based) with the same cache key, or 0."""
    return [0 if call.compiles else call.nearest for call in analyse_target(target, argsets).calls]
