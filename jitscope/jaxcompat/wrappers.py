"""Every jit wrapper jitscope recognises, and what each makes static and traced: the one place that knows.

Every path that loads a callable asks :func:`recognise` (a target in a module with
``JITSCOPE_EXAMPLES`` or ``--shapes``, the Python API, ``--from-run``, ``--from``, the
``jit_bench`` fixture), and ``jitscope run`` names the same rules on a live cache miss
(``run/wrappers.py``), so one wrapper means one thing everywhere:

- ``jax.jit``/``pjit`` (with ``partial``, ``static_argnums``/``static_argnames``,
  ``donate_argnums``, shardings): the function inside and the wrapper's own options; a Python
  number not named static is traced (weak-typed), as JAX traces it;
- ``equinox.filter_jit``: the function inside; every leaf that is not an array is static,
  Python numbers included (a new ``lr=1e-3`` compiles again), array leaves are traced;
- flax's ``nnx.jit`` (and any other library's wrapper): called as it is, its graph state split
  by the wrapper itself; leaves jax.jit cannot take (a module's functions and strings) are
  static, Python numbers traced, as ``nnx.jit`` traces them; the state it writes into its
  argument objects is returned too (``returning_updates``);
- a plain function (haiku's transformed ``apply`` is one): ``jax.jit(fn)``, exactly (a leaf it
  cannot take is the error jax.jit gives, explained); handed live arguments (the Python API,
  ``--from-run``, ``jit_bench``: :func:`recognise_live`), every non-array leaf static instead.

Which leaves a call actually makes static is decided per call (:func:`static_leaves_in`): a
wrapper whose rule finds none there is jitted as plain ``jax.jit``, exactly.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jitscope.jaxcompat.jit import NO_LEAVES, NON_ARRAYS, OBJECTS, JitOptions, is_static_leaf, unwrap_jit

#: Wrapper kinds (``Recognised.kind``; ``jitscope run``'s ``via`` names equinox's by EQUINOX too).
JAX_JIT = "jax.jit"
EQUINOX = "equinox.filter_jit"
NNX = "flax.nnx.jit"
LIBRARY = "a library's jit wrapper"
FUNCTION = "function"

#: Which argument leaves each kind makes static besides the arguments it names (``JitOptions.static_leaves``).
STATIC_LEAVES = {JAX_JIT: NO_LEAVES, EQUINOX: NON_ARRAYS, NNX: OBJECTS, LIBRARY: OBJECTS, FUNCTION: NO_LEAVES}


@dataclass(frozen=True, slots=True)
class Recognised:
    """A user's callable as jitscope jits it (a handle: it holds live objects)."""

    kind: str
    fn: Callable[..., Any]  # the function to trace: a wrapper's inside where it can be taken out
    options: JitOptions

    @property
    def calls_python_per_call(self) -> bool:
        """The user's call runs the wrapper's own Python before the compiled program (equinox, nnx):
        bench times that call, not only the program (``jax.jit``'s call is the program's C++ fast path)."""
        return self.kind in (EQUINOX, NNX, LIBRARY)


def recognise(obj: Any) -> Recognised:
    """What ``obj`` is and how jitscope jits it (see the module docstring)."""
    unwrapped = unwrap_jit(obj)
    if unwrapped is not None:
        fn, options = unwrapped
        return Recognised(JAX_JIT, fn, options)
    if is_equinox_jit(obj):
        return Recognised(EQUINOX, obj.__wrapped__, JitOptions(static_leaves=STATIC_LEAVES[EQUINOX],
                                                               donate_argnums=_equinox_donated(obj)))
    if is_plain_function(obj):
        return Recognised(FUNCTION, obj, JitOptions(static_leaves=STATIC_LEAVES[FUNCTION]))
    # a library's jit wrapper (nnx.jit): its updates are written into the arguments; keep them
    kind = NNX if _defined_in(obj, "flax") else LIBRARY
    return Recognised(kind, obj, JitOptions(static_leaves=STATIC_LEAVES[kind], return_updates=True))


def recognise_live(obj: Any) -> Recognised:
    """:func:`recognise` for a callable handed with live arguments (the Python API, ``--from-run``,
    ``jit_bench``): a bare function, whose jit the user has not written, gets equinox's rule, so models,
    optimizers and Python values pass as they are (``jitscope.trace(f, x, 3)``: ``3`` static, as for
    ``range(n)``)."""
    found = recognise(obj)
    if found.kind != FUNCTION:
        return found
    return dataclasses.replace(found, options=dataclasses.replace(found.options, static_leaves=NON_ARRAYS))


def _equinox_donated(wrapper: Any) -> tuple[int, ...]:
    """The positions whose arrays ``filter_jit(donate=...)`` donates: the first argument
    (``donate_first``: "all" and "warn"), the rest (``donate_rest``: "all"), read defensively."""
    first, rest = bool(getattr(wrapper, "donate_first", False)), bool(getattr(wrapper, "donate_rest", False))
    try:
        count = len(inspect.signature(wrapper.__wrapped__).parameters)
    except (TypeError, ValueError):
        count = 1
    return tuple(i for i in range(max(count, 1)) if (first if i == 0 else rest))


def is_equinox_jit(obj: Any) -> bool:
    """``equinox.filter_jit``'s wrapper object (``_JitWrapper``), whose ``__wrapped__`` is the user's function."""
    return _defined_in(obj, "equinox") and callable(getattr(obj, "__wrapped__", None)) \
        and not inspect.isfunction(obj)


def _defined_in(obj: Any, package: str) -> bool:
    module = getattr(type(obj), "__module__", "") if not inspect.isfunction(obj) else obj.__module__
    code = getattr(obj, "__code__", None)
    return str(module).split(".")[0] == package or (
        code is not None and f"/{package}/" in code.co_filename.replace("\\", "/"))


def is_plain_function(fn: Any) -> bool:
    """A function or bound method, not a library's jit wrapper: an object (flax >= 0.11 ``nnx.jit``,
    equinox ``filter_jit``) or a wrapper function defined in a library around the user's (older
    flax's ``nnx.jit``: a ``functools.wraps`` function whose code is flax's)."""
    if not (inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isbuiltin(fn)):
        return False
    if getattr(fn, "__wrapped__", None) is None:
        return True
    from jitscope.userframes import default_is_user_file

    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    return code is None or default_is_user_file(code.co_filename)


def static_leaves_in(options: JitOptions, args: Any) -> list[tuple[Any, Any]]:
    """``(path, leaf)`` of every leaf of ``args`` (any pytree: ``(args, kwargs)``) that ``options``' rule
    makes static; jitscope's ``ArraySpec`` leaves (shape and dtype) are arrays."""
    if not options.static_leaves:
        return []
    import jax

    flat, _ = jax.tree_util.tree_flatten_with_path(args)
    return [(path, leaf) for path, leaf in flat if is_static_leaf(leaf, options.static_leaves)]


def static_values(options: JitOptions, args: tuple[Any, ...], kwargs: dict[str, Any],
                  params: list[str]) -> list[tuple[str, Any]]:
    """``(name, value)`` of the Python values (numbers, strings) among the leaves ``options``' rule makes
    static, named by parameter and path (``lr``, ``config['dropout']``): a call's statics as a report lists
    them. Objects (a model's functions) are left out."""
    import jax

    out = []
    for path, leaf in static_leaves_in(options, (args, kwargs)):
        if not isinstance(leaf, (bool, int, float, complex, str)) or len(path) < 2:
            continue
        where, key, rest = path[0], path[1], path[2:]
        index = getattr(key, "idx", None)
        if getattr(where, "idx", None) == 0 and index is not None:
            name = params[index] if index < len(params) else f"args[{index}]"
        else:
            name = str(getattr(key, "key", key))
        out.append((name + jax.tree_util.keystr(tuple(rest)), leaf))
    return out


def for_call(options: JitOptions, args: Any) -> JitOptions:
    """``options`` for one call: :class:`~jitscope.jaxcompat.jit.FilteredJit` where its rule makes a leaf of
    ``args`` static, plain ``jax.jit`` otherwise."""
    filtered = bool(static_leaves_in(options, args))
    return options if filtered == options.filter_static else dataclasses.replace(options, filter_static=filtered)


def describe_rule(kind: str, rule: str) -> str:
    """The note a report gives where a call's leaves were made static by ``rule`` (its wrapper's)."""
    if rule == NON_ARRAYS:
        return ("non-array leaves static, as its wrapper (equinox.filter_jit) makes them" if kind == EQUINOX
                else "non-array leaves static (objects and Python values passed as they are)")
    owner = f"as its wrapper ({kind}) makes them" if kind in (NNX, LIBRARY) else "Python numbers traced"
    return f"leaves jax.jit cannot take static, {owner}"
