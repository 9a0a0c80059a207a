"""A target from a live function and the arguments of one call of it.

Used by ``--from-run`` (the call the running program made) and by the Python API
(``jitscope.trace(step, model, optimizer, batch)``): both hand the commands an ordinary
``TargetHandle`` whose one example is that call, so tracing, timing and profiling run on it
unchanged.

Arguments are split into traced and static as the user's own wrapper splits them, by the rules
every other path follows (``jaxcompat/wrappers.py``): a ``jax.jit`` wrapper's own options;
``equinox.filter_jit``: every non-array leaf static, Python numbers included; ``nnx.jit``: the leaves
jax.jit cannot take static (models' functions, strings), Python numbers traced. A bare function, whose
jit the user has not written yet, gets equinox's rule here, so models, optimizers and Python values pass
as they are (``jitscope.trace(f, x, 3)``: ``3`` static, as for ``range(n)``).
``static_argnums``/``static_argnames`` given explicitly add those, and a Python number not named is
then traced (a weak-typed scalar), as jax.jit traces it.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import types
from collections.abc import Mapping, Sequence
from typing import Any

from jitscope.jaxcompat.jit import OBJECTS, JitOptions, unwrap_jit
from jitscope.jaxcompat.values import detached
from jitscope.jaxcompat.wrappers import JAX_JIT, recognise_live, static_leaves_in
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, parameter_names


def live_target(
    fn: Any,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    *,
    text: str,
    attr_path: str,
    how: str,
    label: str = "",
    module: types.ModuleType | None = None,
    static_argnums: Sequence[int] | None = None,
    static_argnames: Sequence[str] | None = None,
    abstract: bool = False,
) -> TargetHandle:
    """``fn`` (a jit wrapper, a library wrapper or a function) with one call's arguments as its example.

    ``abstract`` (trace): array leaves in plain containers become their abstract values (shape,
    dtype, weak type, sharding): nothing is allocated; arrays inside other objects stay as they are.
    """
    found = recognise_live(fn)
    inner, options = found.fn, found.options
    if found.kind != JAX_JIT and (options.return_updates or static_leaves_in(options, (tuple(args), dict(kwargs)))):
        # a library's jit may write new state into the model and optimizer objects: into copies
        args, kwargs = detached((tuple(args), dict(kwargs)))
    if static_argnums is not None or static_argnames is not None:
        rule = OBJECTS if options.static_leaves else options.static_leaves
        options = dataclasses.replace(options, static_leaves=rule,
                                      static_argnums=tuple(dict.fromkeys(options.static_argnums
                                                                         + tuple(static_argnums or ()))),
                                      static_argnames=tuple(dict.fromkeys(options.static_argnames
                                                                          + tuple(static_argnames or ()))))
    if abstract:
        from jitscope.load.examples import to_spec

        args, kwargs = to_spec(tuple(args)), to_spec(dict(kwargs))
    names = parameter_names(inner)
    static = tuple(n for n in static_names(options, names) if n in kwargs or n in names[: len(args)])
    argset = ArgSet(tuple(args), dict(kwargs), static, label=label)
    return TargetHandle(text=text, name=text, attr_path=attr_path, fn=inner, original=fn, options=options,
                        module=module if module is not None else module_of(inner), how=how, examples=(argset,))


def module_of(fn: Any) -> types.ModuleType:
    """The module that defines ``fn``, or a stand-in named after its file (functions made in ``__main__``,
    a notebook cell, or ``exec``)."""
    module = inspect.getmodule(inspect.unwrap(fn)) if callable(fn) else None
    if module is not None and module.__name__ != "__main__":
        return module
    filename = source_file(fn)
    stand_in = types.ModuleType(os.path.splitext(os.path.basename(filename))[0] if filename else "__main__")
    if filename:
        stand_in.__file__ = os.path.abspath(filename)
    return stand_in


def source_file(fn: Any) -> str | None:
    try:
        return inspect.getsourcefile(inspect.unwrap(fn))
    except (TypeError, ValueError):
        code = getattr(fn, "__code__", None)
        return code.co_filename if code is not None else None


def display_name(fn: Any) -> str:
    """``train.py:train_step``: the file's name and the function's qualified name (``<lambda>``, methods)."""
    unwrapped = unwrap_jit(fn)
    inner: Any = unwrapped[0] if unwrapped is not None else fn
    inner = inspect.unwrap(inner) if callable(inner) else inner
    name = getattr(inner, "__qualname__", None) or getattr(inner, "__name__", None) or type(inner).__name__
    filename = source_file(inner)
    if filename and not filename.startswith("<") and os.path.basename(filename).endswith(".py"):
        return f"{os.path.basename(filename)}:{name}"
    return str(name)


def static_names(options: JitOptions, names: list[str]) -> tuple[str, ...]:
    by_number = tuple(names[i] for i in options.static_argnums if 0 <= i < len(names))
    return tuple(dict.fromkeys(options.static_argnames + by_number))
