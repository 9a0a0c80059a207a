"""Recognising and unwrapping ``jax.jit`` wrappers, and building new ones."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jitscope.jaxcompat.features import jit_cache_size, jit_function, jit_info
from jitscope.jaxcompat.sharding import declared_shardings


@dataclass(frozen=True, slots=True)
class JitOptions:
    """The jit options that change how a function is traced and cached."""

    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    donate_argnums: tuple[int, ...] = ()
    #: True when the user's object was already a jit wrapper (its options are honoured).
    from_user_jit: bool = False
    #: The wrapper's declared ``in_shardings``/``out_shardings`` (live sharding pytrees), None where not given.
    in_shardings: Any = None
    out_shardings: Any = None

    def with_static_names(self, names: tuple[str, ...]) -> JitOptions:
        merged = tuple(dict.fromkeys(self.static_argnames + names))
        return dataclasses.replace(self, static_argnames=merged)


def is_jitted(obj: Any) -> bool:
    """True for objects returned by ``jax.jit`` (and ``pjit``)."""
    return callable(obj) and hasattr(obj, "lower") and jit_info(obj) is not None


def unwrap_jit(obj: Any) -> tuple[Callable[..., Any], JitOptions] | None:
    """The Python function inside a jit wrapper and the wrapper's options, or None."""
    info = jit_info(obj) if callable(obj) and hasattr(obj, "lower") else None
    fun = jit_function(obj) if info is not None else None
    if fun is None:
        return None
    in_shardings, out_shardings = declared_shardings(info)
    return fun, JitOptions(
        static_argnums=tuple(getattr(info, "static_argnums", ()) or ()),
        static_argnames=tuple(getattr(info, "static_argnames", ()) or ()),
        donate_argnums=tuple(getattr(info, "donate_argnums", ()) or ()),
        from_user_jit=True,
        in_shardings=in_shardings,
        out_shardings=out_shardings,
    )


def make_jit(fn: Callable[..., Any], options: JitOptions) -> Any:
    """A fresh ``jax.jit`` wrapper (with its own empty cache) for ``fn``."""
    import jax

    shardings = {name: value for name, value in (("in_shardings", options.in_shardings),
                                                  ("out_shardings", options.out_shardings)) if value is not None}
    return jax.jit(
        fn,
        static_argnums=options.static_argnums or None,
        static_argnames=options.static_argnames or None,
        donate_argnums=options.donate_argnums or None,
        **shardings,
    )


def cache_size(jitted: Any) -> int | None:
    """Number of compiled entries in a jit wrapper's in-memory cache, where JAX exposes it."""
    return jit_cache_size(jitted)
