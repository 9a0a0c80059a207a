"""The effect monitor's profile hook switched off inside the binds of JAX's own primitives (Python 3.11).

On CPython 3.11, while any ``sys.setprofile`` hook is set, every instruction of every frame runs on the
interpreter's slow path: a no-op hook alone makes tracing about 2x slower, wherever the time goes.
Most of a trace's time is JAX's own work on each primitive the user's code applies (``Primitive.bind``:
canonicalising the arguments, the abstract evaluation, the JVP and batching rules, the jaxpr
bookkeeping), and none of it can run the user's code when the primitive is one of JAX's own and is
given no function: its rules are JAX's. So while a watch is on, ``bind`` of such a primitive runs with
the hook off and puts it back on return: the user's frames, and the library frames between them, are
watched as before.

Not switched off: a primitive of another class (call, custom_jvp/vjp and map primitives trace or call
functions the user gave), a primitive with a function among its parameters, and a primitive whose
implementation or rules are defined outside JAX (the user's own, ``jax.extend.core.Primitive``: its
rules may print). ``sys.monitoring`` (3.12+) needs none of this: it disables each library location
after its first event.
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


@contextlib.contextmanager
def hook_off_in_binds(hook: Callable[..., Any]) -> Iterator[None]:
    """While the block runs, binds of JAX's own primitives on a thread whose profile hook is ``hook`` run
    without it. Re-entrant and thread-safe: the gate is installed while any watch is on."""
    global _original
    from jax._src import core

    with _lock:
        if not _active:
            _original = core.Primitive.bind
            core.Primitive.bind = _gated(_original, core.Primitive)  # type: ignore[method-assign]
        _active.add(hook)
    try:
        yield
    finally:
        with _lock:
            _active.discard(hook)
            if not _active and _original is not None:
                if getattr(core.Primitive.bind, "__wrapped__", None) is _original:  # not replaced since
                    core.Primitive.bind = _original  # type: ignore[method-assign]
                _original = None


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
            if callable(value):
                return bind(self, *args, **params)
        setprofile(None)
        try:
            return bind(self, *args, **params)
        finally:
            setprofile(hook)

    return gated_bind


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
        return not callable(rule) or type(rule).__module__.split(".")[0] in ("jax", "jaxlib", "builtins")
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
