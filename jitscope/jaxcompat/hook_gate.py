"""The effect monitor's profile hook switched off inside JAX's own work (Python 3.11).

On CPython 3.11, while any ``sys.setprofile`` hook is set, every instruction of every frame runs on the
interpreter's slow path: a no-op hook alone makes tracing about 2x slower, wherever the time goes.
Most of a trace's time is JAX's own work, where the user's code cannot run, so while a watch is on,
two places run with the hook off and put it back on return:

* ``Primitive.bind`` of one of JAX's own primitives given no function (canonicalising the arguments,
  the abstract evaluation, the JVP and batching rules, the jaxpr bookkeeping: the rules are JAX's);
* a nested ``jit`` of one of JAX's own functions (``jnp.sin``, ``x * y``, ``jax.nn.gelu``: each
  jitted, with a Python path per call while tracing) whose arguments are arrays, scalars, shapes or
  dtypes, so that nothing of the user's (a function, a pytree of theirs) can be called.

Not switched off: a primitive of another class (call, custom_jvp/vjp and map primitives trace or call
functions the user gave), a primitive with a function among its parameters (a callable of a class of
JAX's, a ``Mesh``, does not count, but JAX's ``WrappedFun`` does: it wraps the user's), a primitive whose
implementation or rules are defined outside JAX (the user's own, ``jax.extend.core.Primitive``: its
rules may print), a jitted function of any other package or with any other argument (an objective
given to ``jax.scipy.optimize.minimize``). The user's frames, and the library frames between them,
are watched as before. ``sys.monitoring`` (3.12+) needs none of this: it disables each library
location after its first event.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

_lock = threading.Lock()
_active: set[Callable[..., Any]] = set()  # the profile hooks of the watches now on, on any thread
_original: Callable[..., Any] | None = None  # Primitive.bind while the gate is installed
_original_infer: Callable[..., Any] | None = None  # jax._src.pjit._infer_params, likewise


@contextlib.contextmanager
def hook_off_inside_jax(hook: Callable[..., Any]) -> Iterator[None]:
    """While the block runs, JAX's own binds and nested jits on a thread whose profile hook is ``hook`` run
    without it. Re-entrant and thread-safe: the gates are installed while any watch is on."""
    global _original, _original_infer
    from jax._src import core, pjit

    from jitscope.jaxcompat.compile_hooks import hide_from_jax_tracebacks

    hide_from_jax_tracebacks(__file__)  # the gates sit between the user's line and JAX's: not a location
    with _lock:
        if not _active:
            _original = core.Primitive.bind
            core.Primitive.bind = _gated(_original, core.Primitive)  # type: ignore[method-assign]
            infer = getattr(pjit, "_infer_params", None)
            if callable(infer):
                _original_infer = infer
                pjit._infer_params = _gated_infer(infer, core.Tracer)
        _active.add(hook)
    try:
        yield
    finally:
        with _lock:
            _active.discard(hook)
            if not _active:
                _put_back(core.Primitive, "bind", _original)
                _put_back(pjit, "_infer_params", _original_infer)
                _original = _original_infer = None


def _put_back(owner: Any, name: str, original: Callable[..., Any] | None) -> None:
    if original is not None and getattr(getattr(owner, name, None), "__wrapped__", None) is original:
        setattr(owner, name, original)  # only where nothing replaced the gate since


def _gated(bind: Callable[..., Any], primitive_class: type) -> Callable[..., Any]:
    getprofile, setprofile = sys.getprofile, sys.setprofile
    active = _active
    own: dict[Any, bool] = {}  # primitive -> whether it is JAX's own (decided once)

    @functools.wraps(bind)
    def gated_bind(self: Any, *args: Any, **params: Any) -> Any:
        hook = getprofile()
        if hook is None or hook not in active or type(self) is not primitive_class:
            return bind(self, *args, **params)
        jax_own = own.get(self)
        if jax_own is None:
            jax_own = own[self] = _jax_own(self)
        if not jax_own:
            return bind(self, *args, **params)
        for value in params.values():  # a loop, not any(...): a generator's every step is a profile event
            # a function may run; a callable of a class of JAX's (a Mesh) runs nothing of the user's, but JAX's
            # WrappedFun wraps the user's function
            if callable(value) and (not _jax_module(type(value).__module__) or type(value).__name__ == "WrappedFun"):
                return bind(self, *args, **params)
        setprofile(None)
        try:
            return bind(self, *args, **params)
        finally:
            setprofile(hook)

    return gated_bind


@functools.cache
def _jax_module(module: str) -> bool:
    """Whether a module is JAX's (``jax.*``, ``jaxlib.*``)."""
    return module.split(".")[0] in ("jax", "jaxlib")


def _gated_infer(infer: Callable[..., Any], tracer_class: type) -> Callable[..., Any]:
    """``pjit._infer_params(fun, ji, args, kwargs)`` (the Python path of a jitted call while tracing: its
    arguments read, its body traced or its trace reused), with the hook off for JAX's own functions."""
    import jax
    import numpy as np

    getprofile, setprofile = sys.getprofile, sys.setprofile
    active = _active
    jax_folder = _jax_folder()
    plain = (tracer_class, jax.Array, np.ndarray, np.generic, np.dtype, int, float, complex, bool, str, type(None))

    def only_values(values: Any) -> bool:
        for value in values:
            if isinstance(value, (tuple, list)):
                for item in value:
                    if not isinstance(item, plain):
                        return False
            elif not isinstance(value, plain):
                return False
        return True

    @functools.wraps(infer)
    def gated_infer(fun: Any, ji: Any, args: Any, kwargs: Any, *rest: Any, **kw: Any) -> Any:
        hook = getprofile()
        if hook is None or hook not in active:
            return infer(fun, ji, args, kwargs, *rest, **kw)
        code = getattr(fun, "__code__", None)
        if (code is None or not code.co_filename.startswith(jax_folder) or not only_values(args)
                or (kwargs and not only_values(kwargs.values()))):
            return infer(fun, ji, args, kwargs, *rest, **kw)
        setprofile(None)
        try:
            return infer(fun, ji, args, kwargs, *rest, **kw)
        finally:
            setprofile(hook)

    return gated_infer


def _jax_own(primitive: Any) -> bool:
    """Whether the primitive's implementation and its abstract evaluation, JVP, transpose and batching rules
    are all JAX's code (a function of any other package's, the user's included, may do anything)."""
    from jax._src.interpreters import ad, batching

    rules = [getattr(primitive, "impl", None), getattr(primitive, "abstract_eval", None)]
    for table in (ad.primitive_jvps, ad.primitive_transposes, batching.primitive_batchers):
        with contextlib.suppress(Exception):  # a table JAX keeps behind a proxy on some versions
            rules.append(table.get(primitive))
    return all(_in_jax(rule, 3) for rule in rules if rule is not None)


def _in_jax(rule: Any, depth: int) -> bool:
    """Whether a rule and the functions it wraps (partials, closures, ``__wrapped__``) are JAX's own."""
    if depth < 0:
        return True
    if isinstance(rule, functools.partial):
        return _in_jax(rule.func, depth - 1) and all(_in_jax(a, depth - 1) for a in rule.args if callable(a))
    rule = getattr(rule, "__func__", rule)  # a bound method
    code = getattr(rule, "__code__", None)
    if code is None:
        return not callable(rule) or _jax_module(type(rule).__module__) or type(rule).__module__ == "builtins"
    if not code.co_filename.startswith(_jax_folder()):
        return False
    inner = [cell.cell_contents for cell in (getattr(rule, "__closure__", None) or ())
             if _cell_filled(cell) and callable(cell.cell_contents)]
    wrapped = getattr(rule, "__wrapped__", None)
    return all(_in_jax(f, depth - 1) for f in [*inner, *([wrapped] if wrapped is not None else [])])


def _cell_filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


@functools.cache
def _jax_folder() -> str:
    import jax

    return os.path.dirname(os.path.abspath(jax.__file__)) + os.sep
