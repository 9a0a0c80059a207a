"""Cache keys of live calls: what JAX saw on a real cache miss, in ``cachekeys`` components.

Built only on a miss (never for a cached call), from the arguments JAX was handed. The
component names are the ones ``recompile.cache_key`` builds from argument specs, so
``jitscope run`` and ``lint --trace`` (JS306) describe a recompile in the same words.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jitscope.dtypes import short_name
from jitscope.jaxcompat.compile_hooks import LeafInfo, describe_leaf
from jitscope.jaxcompat.jit import is_static_leaf
from jitscope.tracing import cachekeys
from jitscope.tracing.cachekeys import Key, shorten

if TYPE_CHECKING:
    from jitscope.run.wrappers import UserCall


def unwrap_function(fun: Any) -> Any:
    """The user's function behind ``functools.partial``, ``functools.wraps`` wrappers and bound methods."""
    seen = 0
    while seen < 20:
        seen += 1
        if isinstance(fun, functools.partial):
            fun = fun.func
        elif isinstance(fun, types.MethodType):
            fun = fun.__func__
        elif getattr(fun, "__wrapped__", None) is not None and callable(fun.__wrapped__):
            fun = fun.__wrapped__
        else:
            break
    return fun



def positional_names(fun: Any) -> tuple[str, ...]:
    """Names of ``fun``'s positional parameters, as JAX's call sees them (partial's bound ones removed)."""
    if type(fun) is types.FunctionType and "__wrapped__" not in fun.__dict__ and "__signature__" not in fun.__dict__:
        # What inspect.signature answers for a plain function, read off its code: ~40x cheaper, and every
        # compile asks (eager ops compile one small function each; a real model's program has dozens).
        code = fun.__code__
        return code.co_varnames[:code.co_argcount]
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params
                 if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD))


def leaf_text(info: LeafInfo) -> str:
    return ("~" if info.weak_type else "") + f"{short_name(info.dtype)}[{','.join(map(str, info.shape))}]"


def live_key(call: UserCall, *, x64: bool, statics: cachekeys.StaticValues | None = None) -> tuple[Key, str]:
    """The cache key of one call (arguments only) and a one-line signature of it.

    Keys compared with each other must share one ``statics`` (equal static values, one text).
    """
    statics = cachekeys.StaticValues() if statics is None else statics
    nums, names = call.static_argnums, call.static_argnames
    params = positional_names(call.fun)
    key: Key = {}
    parts: list[str] = []
    for index, value in enumerate(call.args):
        name = params[index] if index < len(params) else f"args[{index}]"
        cachekeys.add_passed(key, name, keyword=False)
        parts.append(_add_argument(key, name, value, index in nums or name in names, x64, call.static_leaves,
                                   statics))
    for name, value in call.kwargs.items():
        cachekeys.add_passed(key, name, keyword=True)
        parts.append(_add_argument(key, name, value, name in names, x64, call.static_leaves, statics))
    return key, ", ".join(parts)


def _add_argument(key: Key, name: str, value: Any, static: bool, x64: bool, static_leaves: str,
                  statics: cachekeys.StaticValues) -> str:
    if static:
        cachekeys.add_static(key, name, value, statics)
        return f"{name}={shorten(repr(value), 40)}"
    import jax

    cachekeys.add_structure(key, name, cachekeys.structure(value, _other_structure))
    flat, _ = jax.tree_util.tree_flatten_with_path(value)
    texts = []
    for path, leaf in flat:
        where = name + jax.tree_util.keystr(path)
        static_leaf = is_static_leaf(leaf, static_leaves)
        info = None if static_leaf else describe_leaf(leaf, x64)
        if info is None:
            if static_leaf:
                cachekeys.add_static(key, where, leaf, statics)
                texts.append(f"{where}={shorten(repr(leaf), 40)}")
            else:
                cachekeys.add_other(key, where, leaf)
            continue
        cachekeys.add_array(key, where, info.shape, short_name(info.dtype), info.weak_type, info.sharding,
                            x64=x64)
        texts.append(f"{where}: {leaf_text(info)}")
    if len(texts) == len(flat) and 0 < len(texts) <= 3:
        return ", ".join(texts)
    return f"{name}: {type(value).__name__} of {len(flat)} leaves"


def _other_structure(value: Any) -> str:
    """Structure text for a pytree node that is not a dict/list/tuple (dataclass, NamedTuple, flax struct)."""
    import jax

    leaves = jax.tree_util.tree_leaves(value)
    if len(leaves) == 1 and leaves[0] is value:
        return "*"
    return shorten(str(jax.tree_util.tree_structure(value)).removeprefix("PyTreeDef"), 120)


def value_text(value: Any, x64: bool) -> str:
    """A closure cell or bound argument as a key component: arrays by type, small values by repr."""
    info = describe_leaf(value, x64)
    if info is not None and not isinstance(value, (bool, int, float, complex)):
        return leaf_text(info)
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return shorten(repr(value), 40)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        return f"function {getattr(value, '__qualname__', '?')}"
    if isinstance(value, (tuple, list)) and len(value) <= 8:
        inner = ", ".join(value_text(v, x64) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    return f"{type(value).__name__} object"


def closure_text(fun: Any, x64: bool) -> str:
    """What a function object carries besides its code: closure cells, partial's bound arguments."""
    parts: list[str] = []
    current: Any = fun
    while isinstance(current, functools.partial):
        parts += [value_text(a, x64) for a in current.args]
        parts += [f"{k}={value_text(v, x64)}" for k, v in current.keywords.items()]
        current = current.func
    inner: Callable[..., Any] | Any = unwrap_function(current)
    code = getattr(inner, "__code__", None)
    cells = getattr(inner, "__closure__", None) or ()
    if code is not None:
        for cell_name, cell in zip(code.co_freevars, cells, strict=False):
            try:
                contents = cell.cell_contents
            except ValueError:
                continue
            parts.append(f"{cell_name}={value_text(contents, x64)}")
    return "(" + ", ".join(parts) + ")" if parts else "(none)"
