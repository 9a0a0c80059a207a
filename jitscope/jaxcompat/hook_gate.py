"""The effect monitor's profile hook switched off inside JAX's own work (Python 3.11).

On CPython 3.11, while any ``sys.setprofile`` hook is set, every instruction of every frame runs on the
interpreter's slow path, and every call and return costs a call of the hook: a no-op hook alone makes
tracing about 2x slower, wherever the time goes. Most of a trace's time is JAX's own work, where the
user's code cannot run, so while a watch is on these run with the hook off and put it back on return:

* ``Primitive.bind`` of one of JAX's own primitives given no function (canonicalising the arguments,
  the abstract evaluation, the JVP and batching rules, the jaxpr bookkeeping: the rules are JAX's);
* a nested ``jit`` of one of JAX's own functions (``jnp.sin``, ``jax.nn.gelu``: each jitted, with a
  Python path per call while tracing) whose arguments are arrays, scalars, shapes or dtypes, so that
  nothing of the user's (a function, a pytree of theirs) can be called;
* a tracer's operators and array methods (``x * 2.0``, ``x[:, 0]``, ``x.reshape(...)``, JAX's forwarding
  to ``jax.numpy``) given such arguments;
* what only describes a tracer or a function: a tracer's origin for an error message (``hasattr(x,
  "sharding")`` builds one on some JAX versions, walking the whole jaxpr) and a function's signature
  and source location for JAX's debug info (``inspect.signature``; ``str()`` of a callable object, unless
  its class's ``__repr__`` or ``__str__`` is the user's: a print there is watched).

Each gate switches the hook off before it looks at its arguments, and back on if it must watch: the
checks themselves then cost no events. Not switched off: a primitive of another class (call,
custom_jvp/vjp and map primitives trace or call functions the user gave), a primitive with a function
among its parameters (a callable of a class of JAX's, a ``Mesh``, does not count, but JAX's ``WrappedFun``
does: it wraps the user's), a primitive whose implementation or rules are defined outside JAX (the
user's own, ``jax.extend.core.Primitive``: its rules may print), a jitted function of any other package
or with any other argument (an objective given to ``jax.scipy.optimize.minimize``), an operator given an
object of the user's (its ``__jax_array__`` may run). The user's frames, and the library frames between
them, are watched as before. ``sys.monitoring`` (3.12+) needs none of this: it disables each library
location after its first event.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from types import BuiltinFunctionType, CodeType, FunctionType, MethodType
from typing import Any

_lock = threading.Lock()
_active: set[Callable[..., Any]] = set()  # the profile hooks of the watches now on, on any thread
#: While any watch is on: (owner, attribute, the gate put there, what was there before).
_installed: list[tuple[Any, str, Callable[..., Any], Any]] = []


@contextlib.contextmanager
def hook_off_inside_jax(hook: Callable[..., Any]) -> Iterator[None]:
    """While the block runs, JAX's own work (above) on a thread whose profile hook is ``hook`` runs without
    it. Re-entrant and thread-safe: the gates are installed while any watch is on."""
    from jitscope.jaxcompat.compile_hooks import hide_from_jax_tracebacks

    hide_from_jax_tracebacks(__file__)  # the gates sit between the user's line and JAX's: not a location
    with _lock:
        if not _active:
            _installed.extend(_install())
        _active.add(hook)
    try:
        yield
    finally:
        with _lock:
            _active.discard(hook)
            if not _active:
                for owner, name, gate, original in reversed(_installed):
                    current = _attribute(owner, name)
                    if current is gate:  # only where nothing replaced the gate since
                        setattr(owner, name, original)
                _installed.clear()


def _attribute(owner: Any, name: str) -> Any:
    """What ``owner`` itself holds under ``name``: a class's own attribute (not one it inherits), a module's."""
    return vars(owner).get(name) if isinstance(owner, type) else getattr(owner, name, None)


def _install() -> list[tuple[Any, str, Callable[..., Any], Any]]:
    """Put every gate in place; returns what to take out."""
    from jax._src import api_util, core, pjit

    plain = _plain_values()
    installed: list[tuple[Any, str, Callable[..., Any], Any]] = []

    def put(owner: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        original = _attribute(owner, name)
        if callable(original) and getattr(original, "__code__", None) is not None:
            gate = make(original)
            setattr(owner, name, gate)
            installed.append((owner, name, gate, original))

    put(core.Primitive, "bind", lambda bind: _gated(bind, core.Primitive))
    put(pjit, "_infer_params", lambda infer: _gated_infer(infer, plain))
    for name, value in list(vars(core.Tracer).items()):
        if _forwards_to_jax_numpy(value):  # x * 2.0, x[0], x.reshape(...): JAX's, on the aval's jax.numpy
            put(core.Tracer, name, lambda method: _gated_plain(method, plain))
    for tracer_class in _jax_subclasses(core.Tracer):
        put(tracer_class, "_origin_msg", _gate)  # reads the jaxpr being built: nothing of the user's
    put(api_util, "fun_signature", _gate)
    put(api_util, "fun_sourceinfo", lambda describe: _gate(describe, _no_users_repr))
    with contextlib.suppress(ImportError):
        from jax._src.interpreters import ad

        for name in ("backward_pass", "backward_pass3"):  # a gradient's transposes (backward_pass3: 0.6+)
            put(ad, name, lambda backward: _gated_backward(backward, core))
    return installed


def _no_users_repr(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """For ``fun_sourceinfo(fun)``: whether naming ``fun`` runs nothing of the user's. A function (or a
    partial of one) is named from its code; a callable object by ``str()``, which runs its class's
    ``__str__``/``__repr__``: a library's (equinox's modules, through wadler_lindig) or Python's, but a print in
    one the user wrote is an effect of the trace, and watched."""
    from jitscope.userframes import default_is_user_file

    fun = args[0] if args else kwargs.get("fun")
    while isinstance(fun, functools.partial):
        fun = fun.func
    if isinstance(fun, (FunctionType, MethodType, BuiltinFunctionType)):
        return True
    kind = type(fun)
    for name in ("__str__", "__repr__"):
        method = getattr(kind, name, None)
        code = getattr(getattr(method, "__func__", method), "__code__", None)
        if isinstance(code, CodeType) and default_is_user_file(code.co_filename):
            return False
    return True


def _forwards_to_jax_numpy(value: Any) -> bool:
    """One of the closures JAX puts on ``Tracer`` for each operator and array method (``op``, ``meth``)."""
    code = getattr(value, "__code__", None)
    return (code is not None and code.co_name in ("op", "meth")
            and code.co_filename.endswith(os.path.join("numpy", "array_methods.py"))
            and code.co_filename.startswith(_jax_folder()))


def _jax_subclasses(cls: type) -> list[type]:
    """``cls`` and its subclasses defined in JAX (the user's tracer classes are left alone)."""
    found, pending = [], [cls]
    while pending:
        current = pending.pop()
        if _jax_module(current.__module__):
            found.append(current)
        pending.extend(current.__subclasses__())
    return found


def _plain_values() -> _PlainValues:
    import jax
    import numpy as np
    from jax._src import core

    return _PlainValues((core.Tracer, jax.Array, np.ndarray, np.generic, np.dtype, int, float, complex, bool, str,
                         slice, type(None), type(Ellipsis)))


class _PlainValues:
    """Whether values are only arrays, scalars, shapes, indices, dtypes and strings (tuples and lists of them
    one level deep): nothing of the user's that JAX could call (a function, a pytree node, ``__jax_array__``)."""

    def __init__(self, kinds: tuple[type, ...]) -> None:
        self.kinds = kinds

    def all(self, args: Any, kwargs: Any) -> bool:
        """Whether positional ``args`` and the values of ``kwargs`` (a dict or None) are all plain."""
        return self(args) and (not kwargs or self(kwargs.values()))

    def __call__(self, values: Any) -> bool:
        kinds = self.kinds
        for value in values:
            if isinstance(value, kinds):
                continue
            if isinstance(value, (tuple, list)):
                for item in value:
                    if not isinstance(item, kinds) and not _dtype_class(item):
                        return False
            elif not _dtype_class(value):
                return False
        return True


def _dtype_class(value: Any) -> bool:
    """A scalar type given as a dtype (``jnp.float32``, ``np.int8``, ``float``)."""
    return isinstance(value, type) and (_jax_module(value.__module__) or value.__module__.split(".")[0] in (
        "numpy", "ml_dtypes", "builtins"))


def _gate(function: Callable[..., Any],
          unwatched: Callable[[tuple[Any, ...], dict[str, Any]], bool] | None = None) -> Callable[..., Any]:
    """``function`` run with the hook off on a watched thread, when ``unwatched(args, kwargs)`` says nothing of
    the user's can run in it (always, without one). The hook goes off before that check, which then costs no
    events, and back on if the call must be watched; a check that fails (an object of another JAX version)
    keeps it on, and the user's trace goes on."""
    getprofile, setprofile = sys.getprofile, sys.setprofile
    active = _active

    @functools.wraps(function)
    def gated(*args: Any, **kwargs: Any) -> Any:
        hook = getprofile()
        if hook is None or hook not in active:
            return function(*args, **kwargs)
        setprofile(None)
        try:
            if unwatched is not None:
                try:
                    watch = not unwatched(args, kwargs)
                except Exception:  # noqa: BLE001 - a gate must never break the trace it watches
                    watch = True
                if watch:
                    setprofile(hook)
            return function(*args, **kwargs)
        finally:
            setprofile(hook)

    return gated


def _gated(bind: Callable[..., Any], primitive_class: type) -> Callable[..., Any]:
    """``Primitive.bind(self, *args, **params)``, unwatched for one of JAX's own primitives given no function."""
    own: dict[Any, bool] = {}  # primitive -> whether it is JAX's own (decided once)

    def unwatched(args: tuple[Any, ...], params: dict[str, Any]) -> bool:
        return type(args[0]) is primitive_class and _bind_is_jax_own(args[0], params, own)

    return _gate(bind, unwatched)


def _bind_is_jax_own(primitive: Any, params: dict[str, Any], own: dict[Any, bool]) -> bool:
    """Whether a bind runs only JAX's code: its primitive's rules are JAX's, and no function is among its
    parameters."""
    jax_own = own.get(primitive)
    if jax_own is None:
        jax_own = own[primitive] = _jax_own(primitive)
    if not jax_own:
        return False
    for value in params.values():
        if _may_run_users_code(value):
            return False
    return True


#: JAX's classes that hold a function given to JAX (the user's, as often as not); ``WrappedFun`` is not even
#: ``callable`` (a ``custom_vjp``'s backward rule is one, in the ``custom_lin`` equation a gradient transposes).
_FUNCTION_HOLDERS = frozenset({"WrappedFun", "HashableFunction", "Partial", "_FlatCallback",
                               "_HashableCallableShim"})


def _may_run_users_code(value: Any) -> bool:
    """Whether a primitive's parameter is a function that may be the user's (a callable of another class of
    JAX's, a ``Mesh``, runs nothing of the user's)."""
    kind = type(value)
    return kind.__name__ in _FUNCTION_HOLDERS or (callable(value) and not _jax_module(kind.__module__))


@functools.cache
def _jax_module(module: str) -> bool:
    """Whether a module is JAX's (``jax.*``, ``jaxlib.*``)."""
    return module.split(".")[0] in ("jax", "jaxlib")


def _gated_infer(infer: Callable[..., Any], plain: _PlainValues) -> Callable[..., Any]:
    """``pjit._infer_params(fun, ji, args, kwargs)`` (the Python path of a jitted call while tracing: its
    arguments read, its body traced or its trace reused), unwatched for JAX's own functions given plain
    arguments."""
    jax_folder = _jax_folder()

    def unwatched(args: tuple[Any, ...], _: dict[str, Any]) -> bool:
        code = getattr(args[0], "__code__", None)
        return isinstance(code, CodeType) and code.co_filename.startswith(jax_folder) and plain.all(args[2], args[3])

    return _gate(infer, unwatched)


def _gated_backward(backward: Callable[..., Any], core: Any) -> Callable[..., Any]:
    """``ad.backward_pass(jaxpr, ...)``, the transposes of a gradient, unwatched when every equation, nested
    jaxprs' included, is one of JAX's own primitives given no function: a ``custom_vjp``'s backward function
    (the user's) keeps the hook on."""
    own: dict[Any, bool] = {}
    jaxpr_class = core.Jaxpr
    closed_class = getattr(core, "ClosedJaxpr", None) or jaxpr_class  # one class since JAX 0.11

    def jax_own(jaxpr: Any, depth: int) -> bool:
        if depth > 32:
            return False
        for eqn in jaxpr.eqns:
            primitive = eqn.primitive
            if not _jax_module(type(primitive).__module__) or not _bind_is_jax_own(primitive, eqn.params, own):
                return False
            for value in eqn.params.values():
                for inner in value if isinstance(value, (tuple, list)) else (value,):
                    if type(inner) is closed_class and closed_class is not jaxpr_class:
                        inner = inner.jaxpr
                    if isinstance(inner, jaxpr_class) and not jax_own(inner, depth + 1):
                        return False
        return True

    def unwatched(args: tuple[Any, ...], _: dict[str, Any]) -> bool:
        return isinstance(args[0], jaxpr_class) and jax_own(args[0], 0)

    return _gate(backward, unwatched)


def _gated_plain(method: Callable[..., Any], plain: _PlainValues) -> Callable[..., Any]:
    """A method of JAX's (``self`` first), unwatched when its arguments are plain (``_PlainValues``)."""
    return _gate(method, lambda args, kwargs: plain.all(args[1:], kwargs))


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
