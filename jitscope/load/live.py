"""A target from a live function and the arguments of one call of it.

Used by ``--from-run`` (the call the running program made) and by the Python API
(``jitscope.trace(step, model, optimizer, batch)``): both hand the commands an ordinary
``TargetHandle`` whose one example is that call, so tracing, timing and profiling run on it
unchanged.

How arguments are split into traced and static, as the user's own jit would:

- a ``jax.jit`` wrapper: its ``static_argnums``/``static_argnames``/``donate_argnums``;
- a plain function called with arrays only (in any pytree): ``jax.jit(fn)``, exactly;
- a library's wrapper (flax ``nnx.jit``, equinox ``filter_jit``), or a plain function called with
  anything else: every leaf that is not an array is static (equinox's rule; what ``nnx.jit`` does
  for a module's non-array state), so models, optimizers and Python numbers pass as they are;
- ``static_argnums``/``static_argnames`` given explicitly: ``jax.jit``'s rule with those
  (a Python number not named is traced, as a weak-typed scalar).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import types
from collections.abc import Mapping, Sequence
from typing import Any

from jitscope.jaxcompat.jit import JitOptions, unwrap_jit
from jitscope.jaxcompat.values import detached
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, is_plain_function, parameter_names


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
    unwrapped = unwrap_jit(fn)
    if unwrapped is not None:
        inner, options = unwrapped
    elif is_plain_function(fn) and _all_arrays((args, kwargs)):
        inner, options = fn, JitOptions()  # what jax.jit(fn) makes of it, exactly
    else:
        inner, options = fn, JitOptions(filter_static=True)
        # a library's jit may write new state into the model and optimizer objects: into copies
        args, kwargs = detached((tuple(args), dict(kwargs)))
    if static_argnums is not None or static_argnames is not None:
        options = dataclasses.replace(options, filter_static=False,
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


def _all_arrays(tree: Any) -> bool:
    import jax

    from jitscope.load.specs import ArraySpec

    leaves = jax.tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, ArraySpec))
    return all(isinstance(leaf, ArraySpec) or (hasattr(leaf, "shape") and hasattr(leaf, "dtype")) for leaf in leaves)


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
