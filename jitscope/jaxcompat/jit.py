"""Recognising and unwrapping ``jax.jit`` wrappers, and building new ones."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

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
    #: Which argument leaves the wrapper makes static besides the ones it names (NO_LEAVES, NON_ARRAYS,
    #: OBJECTS below; ``jaxcompat/wrappers.py`` says which wrapper has which rule).
    static_leaves: str = ""
    #: This call holds leaves ``static_leaves`` makes static: jit it as :class:`FilteredJit`.
    filter_static: bool = False
    #: Also return the argument leaves the function replaced in place (see :func:`returning_updates`):
    #: for a library's jit wrapper (flax's ``nnx.jit``) whose updates live in its argument objects.
    return_updates: bool = False

    def with_static_names(self, names: tuple[str, ...]) -> JitOptions:
        merged = tuple(dict.fromkeys(self.static_argnames + names))
        return dataclasses.replace(self, static_argnames=merged)


#: ``JitOptions.static_leaves``: jax.jit's rule, no leaf is static (one it cannot take is an error) ...
NO_LEAVES = ""
#: ... equinox's ``filter_jit``: every leaf that is not an array, Python numbers included ...
NON_ARRAYS = "non-arrays"
#: ... flax's ``nnx.jit`` (a module's non-array state), a plain function called with objects: the leaves
#: jax.jit cannot take (functions, strings, other objects); Python numbers are traced, as jax.jit traces them.
OBJECTS = "objects"
_PYTHON_NUMBERS = (bool, int, float, complex)


def is_static_leaf(leaf: Any, rule: str) -> bool:
    """Whether ``rule`` (a ``static_leaves`` value) makes ``leaf`` static."""
    if rule == NO_LEAVES or is_array(leaf):
        return False
    return rule == NON_ARRAYS or not isinstance(leaf, _PYTHON_NUMBERS)


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

    from jitscope.faults import exits_as_errors

    fn = exits_as_errors(fn)  # sys.exit in the user's function: a failure of the call, not of jitscope
    if options.filter_static:
        return FilteredJit(fn, options.static_leaves or NON_ARRAYS)  # returns the updates itself
    if options.return_updates:
        fn = returning_updates(fn)

    shardings = {name: value for name, value in (("in_shardings", options.in_shardings),
                                                  ("out_shardings", options.out_shardings)) if value is not None}
    return jax.jit(
        fn,
        static_argnums=options.static_argnums or None,
        static_argnames=options.static_argnames or None,
        donate_argnums=options.donate_argnums or None,
        **shardings,
    )


def returning_updates(fn: Callable[..., Any], counted: Callable[[int], None] | None = None) -> Callable[..., Any]:
    """``fn`` returning ``(out, [replaced leaves])`` when it replaced argument leaves in place
    (``counted`` is told how many, at each trace).

    flax's ``nnx.jit`` writes the new state (parameters, optimizer moments) into the argument
    objects instead of returning it; returned here, the compiled program keeps computing it, as
    nnx's own program does, rather than XLA dropping the backward pass and the update as dead code
    (a timing or a memory peak would then be the forward pass's alone). A function that replaced
    nothing returns what it returns.
    """
    import functools

    @functools.wraps(fn)
    def with_updates(*args: Any, **kwargs: Any) -> Any:
        import jax

        before, structure = jax.tree_util.tree_flatten((args, kwargs))
        out = fn(*args, **kwargs)
        after, structure_after = jax.tree_util.tree_flatten((args, kwargs))
        if cast(Any, structure_after) != structure:
            return out
        updated = [new for old, new in zip(before, after, strict=True) if new is not old]
        if counted is not None:
            counted(len(updated))
        return (out, updated) if updated else out

    return with_updates


def cache_size(jitted: Any) -> int | None:
    """Number of compiled entries in a jit wrapper's in-memory cache, where JAX exposes it."""
    return jit_cache_size(jitted)


class _Same:
    """A static leaf compared by identity (functions, modules' non-array fields): hashable whatever it is."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.value is self.value


class FilteredJit:
    """``jax.jit`` with the argument leaves ``rule`` makes static (:func:`is_static_leaf`) static: every
    non-array leaf, as ``equinox.filter_jit`` does, or only those jax.jit cannot take (``nnx.jit``).

    ``__call__``, ``trace`` and ``lower`` take the arguments as the function does; the array leaves
    become the jitted function's arguments and the rest rides along as one static argument. It
    returns the list of the output's array leaves, then the argument leaves the function replaced in
    place (nnx.jit's state updates): what a trace shows and a timing blocks on.

    The traced leaves are passed in the user's own argument structure (every other leaf replaced by
    None, which JAX reads as an empty subtree) under the user's parameter names, so JAX names them
    as it names a plain jit's arguments (``model.blocks[0].attention.query.kernel.value``,
    ``optimizer.opt_state[0].mu...``) in the jaxpr, the HLO and every report built on them, instead
    of ``dynamic[15]``. Where the function has no signature to borrow, or the structure cannot be
    rebuilt around None, the leaves go in flat.
    """

    def __init__(self, fn: Callable[..., Any], rule: str = NON_ARRAYS) -> None:
        import jax

        self.fn = fn
        self.rule = rule
        self.__wrapped__ = fn

        def named(_jitscope_static: Any, *args: Any, **kwargs: Any) -> Any:
            return self._flat(_jitscope_static, jax.tree_util.tree_leaves((args, kwargs)))

        def flat(_jitscope_static: Any, *dynamic: Any) -> Any:
            return self._flat(_jitscope_static, dynamic)

        # named after the user's function: XLA's module is jit_<name>, as the user's own jit names it
        for wrapper in (named, flat):
            wrapper.__name__ = str(getattr(fn, "__name__", None) or type(fn).__name__)
            wrapper.__qualname__ = str(getattr(fn, "__qualname__", None) or wrapper.__name__)
        self._signature = _borrowed_signature(fn)
        if self._signature is not None:
            named.__signature__ = self._signature  # type: ignore[attr-defined]
        self._jit = jax.jit(flat, static_argnums=(0,))
        self._jit_named = jax.jit(named, static_argnums=(0,)) if self._signature is not None else None

    def _flat(self, static: Any, dynamic: Any) -> Any:
        import jax

        treedef, leaves = static
        it = iter(dynamic)
        given = [next(it) if s is None else s.value for s in leaves]
        args, kwargs = jax.tree_util.tree_unflatten(treedef, given)
        # only the outputs' arrays come out (a returned equinox module's functions stay behind)
        outs = [leaf for leaf in jax.tree_util.tree_leaves(self.fn(*args, **kwargs)) if is_array(leaf)]
        # flax's nnx.jit writes the new state (parameters, optimizer moments) into the argument objects
        # instead of returning it: returned here too, so the compiled program keeps the backward pass and
        # the update, as nnx's own program does (left out, XLA drops them as dead code, and a timing or a
        # memory peak would be the forward pass's alone)
        after, structure = jax.tree_util.tree_flatten((args, kwargs))
        if structure != treedef:
            return outs
        returned = {id(leaf) for leaf in outs}
        return outs + [new for old, new in zip(given, after, strict=True)
                       if new is not old and is_array(new) and id(new) not in returned]

    def _bound(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, tuple[Any, ...], dict[str, Any]]:
        """(the static part, the jitted function to call, its dynamic args and kwargs)."""
        import jax

        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
        keep = [not is_static_leaf(leaf, self.rule) for leaf in leaves]
        static = (treedef, tuple(None if k else _Same(leaf) for leaf, k in zip(leaves, keep, strict=True)))
        arrays = [leaf for leaf, k in zip(leaves, keep, strict=True) if k]
        if self._jit_named is not None:
            named = _rebuilt_around_none(treedef, leaves, keep, arrays, self._signature)
            if named is not None:
                return static, self._jit_named, named[0], named[1]
        return static, self._jit, tuple(arrays), {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        static, jitted, dyn_args, dyn_kwargs = self._bound(args, kwargs)
        return jitted(static, *dyn_args, **dyn_kwargs)

    def trace(self, *args: Any, **kwargs: Any) -> Any:
        static, jitted, dyn_args, dyn_kwargs = self._bound(args, kwargs)
        return jitted.trace(static, *dyn_args, **dyn_kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        static, jitted, dyn_args, dyn_kwargs = self._bound(args, kwargs)
        return jitted.lower(static, *dyn_args, **dyn_kwargs)

    def _cache_size(self) -> int:
        total = 0
        for jitted in (self._jit, self._jit_named):
            size = getattr(jitted, "_cache_size", None)
            total += int(size()) if callable(size) else 0
        return total


def _rebuilt_around_none(treedef: Any, leaves: list[Any], keep: list[bool], arrays: list[Any],
                         signature: Any) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """The user's (args, kwargs) with every non-array leaf None, if the structure takes it and still
    flattens to exactly ``arrays``; None otherwise (the caller passes the leaves flat)."""
    import jax

    try:
        args, kwargs = jax.tree_util.tree_unflatten(treedef, [x if k else None for x, k in zip(leaves, keep, strict=True)])
        again = jax.tree_util.tree_leaves((args, kwargs))
        if len(again) != len(arrays) or any(x is not y for x, y in zip(again, arrays, strict=True)):
            return None
        signature.bind(None, *args, **kwargs)
    except Exception:  # noqa: BLE001 - any pytree's unflatten may refuse None: the flat form always works
        return None
    return tuple(args), dict(kwargs)


def _borrowed_signature(fn: Callable[..., Any]) -> Any:
    """``(_jitscope_static, <the user's parameters>)``, or None where ``fn`` shows no usable signature."""
    import inspect

    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(signature.parameters.values())
    if any(p.name == "_jitscope_static" for p in params):
        return None
    first = inspect.Parameter("_jitscope_static", inspect.Parameter.POSITIONAL_ONLY)
    try:
        return inspect.Signature([first, *params])
    except ValueError:  # e.g. defaults before non-defaults cannot follow ours
        return None


def is_array(value: Any) -> bool:
    """An array leaf, concrete or abstract: what ``equinox.is_array`` calls one (NumPy scalars included),
    and anything else with a shape and a dtype (``ShapeDtypeStruct``, jitscope's ``ArraySpec``)."""
    import jax
    import numpy as np

    return isinstance(value, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct)) or (
        hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type))
