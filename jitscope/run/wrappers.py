"""The user's call behind a jit cache miss: who really called, with which arguments.

``jaxcompat.compile_hooks`` sees the function and arguments JAX's ``jit`` was handed.
For ``jax.jit`` those are the user's; for wrappers built on ``jax.jit`` they are the
wrapper's own: ``jax.pmap`` (0.7+) jits an internal ``_fun`` over the flattened
arguments, and equinox's ``filter_jit`` jits a ``fun_wrapped(dynamic_donate,
dynamic_nodonate, static)`` named after the user's function but defined in equinox.
Each adapter here turns such a miss back into the user's function and arguments, so the
event is named, located and keyed as the user wrote the call. Adapters run only on a
miss, read library internals defensively, and return None when they do not recognise
the call (the miss is then reported as JAX saw it).

Flax's ``nnx.jit`` needs no adapter: it hands ``jax.jit`` a function whose
``__wrapped__`` chain (``functools.wraps``) reaches the user's, with the user's
arguments. Linen's ``nn.jit`` jits ``flax.core.lift``'s ``jitted(fingerprint,
variable_groups, rng_groups, *args)``, whose ``__wrapped__`` is ``linen.transforms``'
``core_fn``, which closes over the user's method as ``fn`` (``nn.jit(Module)``), or a
``functools.partial`` of it holding the method (``nn.jit`` as a method decorator).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jitscope.jaxcompat.compile_hooks import donated_argnums, pmap_user_call, static_arg_options
from jitscope.jaxcompat.jit import NO_LEAVES
from jitscope.jaxcompat.wrappers import EQUINOX, STATIC_LEAVES

#: ``CompileEvent.via`` for a plain ``jax.jit`` call.
PLAIN = ""
LINEN = "flax.linen.jit"
__all__ = ["EQUINOX", "LINEN", "PLAIN", "UserCall", "user_call"]


@dataclass(frozen=True, slots=True)
class UserCall:
    """A cache miss as the user's code made it (a handle: it holds live objects)."""

    fun: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    via: str = PLAIN  # "", "jax.pmap", "equinox.filter_jit"
    #: Which leaves the wrapper makes static besides the named arguments (``JitOptions.static_leaves``; the
    #: rules every other path follows, ``jaxcompat/wrappers.py``): equinox's, every non-array leaf.
    static_leaves: str = NO_LEAVES
    #: The positional arguments the user's ``jax.jit`` donates (``donate_argnums``/``donate_argnames``).
    donate_argnums: tuple[int, ...] = ()


def user_call(fun: Any, jit_info: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> UserCall:
    """The user's view of a miss on ``jit(fun)(*args, **kwargs)``."""
    for adapter in _ADAPTERS:
        found = adapter(fun, args, kwargs)
        if found is not None:
            return found
    nums, names = static_arg_options(jit_info)
    return UserCall(fun, args, kwargs, nums, names, via=str(getattr(jit_info, "via", PLAIN)),
                    donate_argnums=donated_argnums(jit_info))


def _pmap(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> UserCall | None:
    found = pmap_user_call(fun)
    if found is None:
        return None
    user_fun, user_args, user_kwargs, static_argnums = found
    return UserCall(user_fun, user_args, user_kwargs, static_argnums, (), via="jax.pmap")


def _equinox(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> UserCall | None:
    """``equinox.filter_jit``: rebuild the user's call the way ``fun_wrapped`` does."""
    code = getattr(getattr(fun, "__wrapped__", fun), "__code__", None)
    if code is None or code.co_name != "fun_wrapped" or not code.co_filename.endswith(("equinox/_jit.py",
                                                                                    "equinox\\_jit.py")):
        return None
    try:
        from equinox._compile_utils import hashable_combine

        dynamic_donate, dynamic_nodonate, static = args
        dynamic = {**dynamic_donate, **dynamic_nodonate}
        static_fun, static_first, static_rest = static
        user_fun = hashable_combine(dynamic["fun"], static_fun)
        first = hashable_combine(dynamic["first"], static_first)
        rest, user_kwargs = hashable_combine(dynamic["rest"], static_rest)
        user_args: tuple[Any, ...] = (first, *rest)[:-1]  # equinox appends a None: no call is argument-free
    except Exception:  # noqa: BLE001 - another equinox release: report the miss as JAX saw it
        return None
    return UserCall(user_fun, tuple(user_args), dict(user_kwargs), via=EQUINOX,
                    static_leaves=STATIC_LEAVES[EQUINOX])


def _linen(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> UserCall | None:
    """``flax.linen.jit``: the module's method, called with ``self``, its arguments and its variables.

    ``nn.jit(Module)`` jits a ``core_fn`` closing over the method as ``fn``; ``nn.jit`` on a method
    (a decorator) jits ``functools.partial(core_fn, prewrapped_fn, class_fn)``.
    """
    code = getattr(fun, "__code__", None)
    core: Any = getattr(fun, "__wrapped__", None)
    bound: tuple[Any, ...] = ()
    if isinstance(core, functools.partial):
        bound = core.args
        core = core.func
    core_code = getattr(core, "__code__", None)
    if (code is None or core_code is None or code.co_name != "jitted" or core_code.co_name != "core_fn"
            or "flax" not in code.co_filename or len(args) < 3):
        return None
    if len(bound) >= 2:
        method = bound[1]  # class_fn: the method as the class defines it
    else:
        cells = dict(zip(core_code.co_freevars, getattr(core, "__closure__", None) or (), strict=False))
        try:
            method = cells["fn"].cell_contents
        except (KeyError, ValueError):
            return None
    fingerprint, variables, _rngs, *rest = args
    proxy = fingerprint[1] if isinstance(fingerprint, tuple) and len(fingerprint) > 1 else fingerprint
    module = getattr(proxy, "module", proxy)
    return UserCall(method, (module, *rest), {**kwargs, "variables": variables}, static_argnums=(0,), via=LINEN)


_ADAPTERS: tuple[Callable[[Any, tuple[Any, ...], dict[str, Any]], UserCall | None], ...] = (_pmap, _equinox, _linen)
