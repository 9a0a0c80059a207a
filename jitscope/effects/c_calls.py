"""Calls the profile hook sees only as C calls, or not at all: what the watch makes of them.

A mixin of :class:`jitscope.effects.watch.EffectWatch`: a builtin called from user code
(a catalogued effect, an in-place method of a watched container, NumPy's Cython random
methods), print handed to C code (a ``functools.partial`` of it, ``map(print, xs)``,
``sorted(xs, key=print)``), print called by library code for the user, and ``sys.stdout.write``
on a Python stream object.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Any

from jitscope.effects.bytecode import CodeFacts
from jitscope.effects.catalog import (
    MUTATING_METHODS,
    STREAM_WRITE_METHODS,
    EffectCatalog,
    NumpyRandomSupport,
)
from jitscope.effects.frames import FrameChecks
from jitscope.effects.state import PreexistingObjects, WatchedObject, resolve_path
from jitscope.model.effects import EffectKind


class CCallChecks:
    """C calls and builtins handed to C code, for :class:`~jitscope.effects.watch.EffectWatch`."""

    _catalog: EffectCatalog
    _numpy_random: NumpyRandomSupport
    _objects: PreexistingObjects
    _facts: dict[int, CodeFacts]
    _pending_c_calls: list[tuple[object, WatchedObject | None, str, types.FrameType, int]]
    _print_depth: int
    _internal_errors: int
    handed_builtins: dict[int, Any]
    user_frames: set[types.FrameType]
    frames: FrameChecks

    def _report(self, kind: EffectKind, detail: str, code: types.CodeType, line: int) -> None:
        raise NotImplementedError

    def _is_user_frame(self, frame: types.FrameType | None) -> bool:
        raise NotImplementedError

    def on_user_c_call(self, frame: types.FrameType, function: Any) -> None:
        """Profile ``c_call`` from a user frame: ``function`` is a builtin, bound to its owner."""
        try:
            if not self._report_catalogued_callable(frame, function) and not self._check_handed_args(frame, function):
                owner = getattr(function, "__self__", None)
                self._check_c_method(frame, function, owner, getattr(function, "__name__", ""))
        except Exception:  # noqa: BLE001
            self._internal_errors += 1

    def on_library_builtin_call(self, frame: types.FrameType, function: Any) -> None:
        """A catalogued builtin called by library code (``tree_map(print, grads)``): reported at the
        line of the nearest user frame below, which handed it over."""
        try:
            caller: types.FrameType | None = frame.f_back
            while caller is not None and caller not in self.user_frames:
                caller = caller.f_back
            if caller is None:
                return
            spec = self._catalog.by_callable.get(function)
            if spec is not None:
                self._report(
                    spec.kind, f"{spec.detail} (called by library code)", caller.f_code, caller.f_lineno
                )
        except Exception:  # noqa: BLE001
            self._internal_errors += 1

    def on_user_call_event(self, frame: types.FrameType, function: Any, first_arg: Any) -> None:
        """``sys.monitoring`` CALL from a user frame: any callable, with its first argument.

        Python callables are handled when their frame starts; here only C functions,
        method descriptors (``list.append`` called on ``first_arg``) and NumPy's Cython
        random methods, which no other event reveals, are looked at.
        """
        try:
            kind = type(function)
            if kind is types.BuiltinFunctionType:
                self.on_user_c_call(frame, function)  # also `sorted(xs, key=print)`, `reduce(print, xs)`
            elif kind is types.MethodDescriptorType or kind is types.ClassMethodDescriptorType:
                if not self._report_catalogued_callable(frame, function):
                    self._check_c_method(frame, function, first_arg, function.__name__)
            elif kind is functools.partial:
                self._check_partial_call(frame, function)
            elif (function is map or function is filter) and id(first_arg) in self.handed_builtins:
                self.on_user_c_call(frame, first_arg)  # map(print, xs), filter: print runs from C
            elif not isinstance(function, types.FunctionType):
                self._check_numpy_random_call(frame, function, first_arg)
        except Exception:  # noqa: BLE001
            self._internal_errors += 1

    def _check_handed_args(self, frame: types.FrameType, function: Any) -> bool:
        """``sorted(xs, key=print)``, ``functools.reduce(print, xs)``: a C function called from the
        user's line with print among its arguments calls print from C, unseen. The line's call sites
        (from the bytecode) name the arguments; True when one was reported."""
        facts = self._facts.get(id(frame.f_code))
        if facts is None or not facts.handed_calls:
            return False
        line = frame.f_lineno
        for call in facts.handed_calls:
            if call.line != line or not call.args or resolve_path(call.callee, frame) is not function:
                continue
            for arg in call.args:
                builtin = resolve_path(arg, frame)
                if id(builtin) in self.handed_builtins:
                    self._report_handed_call(frame, builtin, function)
                    return True
        return False

    def _check_partial_call(self, frame: types.FrameType, function: Any) -> None:
        """``log = functools.partial(print, ...)``; ``log(x)``: print runs from C, unseen."""
        inner = function.func
        while type(inner) is functools.partial:
            inner = inner.func
        if id(inner) in self.handed_builtins:
            self._report_handed_call(frame, inner, function)

    def _report_handed_call(self, frame: types.FrameType, builtin: Any, function: Any) -> None:
        """``builtin`` (print) runs from C inside the call of ``function`` made at the frame's line."""
        spec = self._catalog.by_callable[builtin]
        self._report(spec.kind, spec.detail, frame.f_code, frame.f_lineno)
        if spec.kind is EffectKind.PRINT:
            # print() writes through sys.stdout.write: do not report that write again.
            self._print_depth += 1
            self._pending_c_calls.append((function, None, "print", frame, frame.f_lineno))

    def _report_handed_builtin(self, frame: types.FrameType, builtin: Any) -> None:
        """Line events (profile back end): the frame's line hands print to C code (a partial, ``map``)."""
        spec = self._catalog.by_callable.get(builtin)
        if spec is not None:
            self._report(spec.kind, spec.detail, frame.f_code, frame.f_lineno)

    def _report_catalogued_callable(self, frame: types.FrameType, function: Any) -> bool:
        # Only builtins reach here: their hash is by identity and runs no user code.
        spec = self._catalog.by_callable.get(function)
        if spec is None:
            return False
        self._report(spec.kind, spec.detail, frame.f_code, frame.f_lineno)
        if spec.kind is EffectKind.PRINT:
            # print() writes through sys.stdout.write: do not report that write again.
            self._print_depth += 1
            self._pending_c_calls.append((function, None, "print", frame, frame.f_lineno))
        return True

    def _check_c_method(self, frame: types.FrameType, function: Any, owner: object, name: str) -> None:
        if owner is None or isinstance(owner, types.ModuleType):
            return
        if _is_standard_stream(owner):
            if name in STREAM_WRITE_METHODS:
                detail = f"{_stream_name(owner)}.{name}()"
                self._report(EffectKind.STDOUT, detail, frame.f_code, frame.f_lineno)
            return
        entry = self._objects.lookup(owner)
        if entry is not None:
            if name in MUTATING_METHODS:
                if entry.changed():
                    self.frames.settle(frame)
                self._pending_c_calls.append((function, entry, name, frame, frame.f_lineno))
            return
        method_spec = self._catalog.spec_for_method(owner, name)
        if method_spec is not None:
            self._report(method_spec.kind, method_spec.detail, frame.f_code, frame.f_lineno)

    def _check_numpy_random_call(self, frame: types.FrameType, function: Any, first_arg: Any) -> None:
        support = self._numpy_random
        if not support.owner_types:
            return
        # Only attributes of known types are read: a user object's __getattr__ must not run here.
        if isinstance(function, types.MethodType):
            owner, name = function.__self__, function.__func__.__name__
        elif type(function).__name__ == "cython_function_or_method":
            owner, name = first_arg, getattr(function, "__name__", "")
        else:
            return
        if not support.is_random_owner(owner) or name not in support.names:
            return
        facts = self._facts.get(id(frame.f_code))
        line = frame.f_lineno
        detail = f"{type(owner).__name__}.{name}()"
        for candidate in facts.call_candidates if facts is not None else ():
            written = str(candidate.callee)
            if candidate.line == line and (written == name or written.endswith(f".{name}")):
                detail = f"{candidate.callee}()"  # as the user wrote it, e.g. np.random.normal()
                break
        self._report(EffectKind.RANDOMNESS, detail, frame.f_code, line)

    def on_c_return(self, function: Any) -> None:
        """A C call ended (``c_return`` or ``c_exception``): settle a pending mutation check."""
        try:
            if not self._pending_c_calls:
                return
            expected = self._pending_c_calls[-1][0]
            # Python 3.12's profile shim binds a method anew for each event: equal, not identical.
            # Only builtins are compared with ==, which runs no user code for them.
            same_builtin = type(function) is types.BuiltinFunctionType and type(expected) is type(function)
            if function is not expected and not (same_builtin and function == expected):
                return
            _, entry, name, frame, line = self._pending_c_calls.pop()
            if entry is None:
                self._print_depth -= 1
            elif entry.changed():
                # Reported only when the content really changed: setdefault on an existing key is not a write.
                entry.refresh()
                self._report(entry.kind, f"{name}() on {entry.label}", frame.f_code, line)
        except Exception:  # noqa: BLE001
            self._internal_errors += 1

    def _check_python_stream_write(self, frame: types.FrameType) -> None:
        """``sys.stdout.write`` when sys.stdout is a Python object (e.g. a capture buffer)."""
        caller = frame.f_back
        if self._print_depth or caller is None or not self._is_user_frame(caller):
            return
        code = frame.f_code
        if code.co_argcount < 1:
            return
        owner = frame.f_locals.get(code.co_varnames[0])
        if _is_standard_stream(owner):
            self._report(
                EffectKind.STDOUT, f"{_stream_name(owner)}.{code.co_name}()", caller.f_code, caller.f_lineno
            )


def _is_standard_stream(value: object) -> bool:
    return value is not None and (
        value is sys.stdout or value is sys.stderr or value is sys.__stdout__ or value is sys.__stderr__
    )


def _stream_name(stream: object) -> str:
    return "sys.stderr" if stream is sys.stderr or stream is sys.__stderr__ else "sys.stdout"
