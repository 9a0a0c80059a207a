"""The state of one effect watch and what it does with each profile event.

``effects.watch_effects`` owns the hook; this module decides, per code object and
per event, what the event means: a catalogued call from user code, a mutation of a
pre-existing container, the traced body starting again. See ``effects`` for the
overall design and ``effects_frames`` for the store and NumPy checks.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import types
from typing import Any

from jitscope.model.common import Location
from jitscope.model.effects import EffectKind, EffectRecord, EffectsRecord
from jitscope.tracing.effects_bytecode import CodeFacts, analyse_code
from jitscope.tracing.effects_catalog import (
    MUTATING_METHODS,
    STREAM_WRITE_METHODS,
    EffectCatalog,
    build_effect_catalog,
    numpy_random_support,
)
from jitscope.tracing.effects_frames import FrameChecks
from jitscope.tracing.effects_state import (
    MISSING,
    PreexistingObjects,
    WatchedObject,
    resolve_path,
    user_type_predicate,
)
from jitscope.userframes import IsUserFile

# Per-code roles, cached as bit flags so the hook decides with one dict lookup.
USER = 1  # the code is user code: its calls and stores are watched
TARGET = 2  # the traced function's body
EFFECT = 4  # a catalogued Python function (logging.info, subprocess.run, ...)
STREAM_WRITE = 8  # a library ``write`` method: an effect if called on sys.stdout/stderr
WATCH_RETURN = 16  # the hook must pass this code's frame events on (user code, the target)

_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


class EffectWatch:
    """The live state of one watch. ``record()`` turns what was seen into an ``EffectsRecord``."""

    def __init__(self, target_code: types.CodeType | None, is_user_file: IsUserFile) -> None:
        self._target_code = target_code
        self._is_user_file = is_user_file
        self._catalog: EffectCatalog = build_effect_catalog()
        self._numpy_random = numpy_random_support()
        self._objects = PreexistingObjects(user_type_predicate(is_user_file))
        self._user_files: dict[str, bool] = {}
        # Per-code decisions are keyed by id(code): hashing a code object hashes its
        # bytecode and constants (~0.3 us), which would dominate the hook's cost.
        # ``_known_codes`` keeps them alive so an id is never reused during the watch.
        self.roles: dict[int, int] = {}
        self._known_codes: list[types.CodeType] = []
        self._facts: dict[int, CodeFacts] = {}
        # Code defined inside code that ran during the watch: its closures hold values
        # created while tracing, not pre-existing state.
        self._locally_defined: set[int] = set()
        # Frames running now: the hook tests membership (frames hash by identity, cheaply).
        self.user_frames: set[types.FrameType] = set()
        self.watched_frames: set[types.FrameType] = set()
        self._pending_c_calls: list[tuple[object, WatchedObject | None, str, types.FrameType, int]] = []
        self._print_depth = 0
        #: builtins that library code calls only for the user (``jax.tree_util.tree_map(print, grads)``,
        #: ``functools.partial(print, ...)``), by id. Not clocks, os or file calls: libraries make
        #: those for themselves (logging reads the clock, uuid reads os.urandom).
        self.handed_builtins: dict[int, Any] = {
            id(fn): fn for fn in (print, input) if fn in self._catalog.by_callable
        }
        self._counts: dict[tuple[EffectKind, str, str, int, str], int] = {}
        self._notes: list[str] = []
        self._internal_errors = 0
        self._body_runs = 0
        self._final: EffectsRecord | None = None
        self.frames = FrameChecks(
            self._objects,
            self._numpy_random,
            self._report,
            self.note,
            self._failed,
            handed_builtins=self.handed_builtins,
            report_handed=self._report_handed_builtin,
        )

    # ----------------------------------------------------------------- results

    @property
    def body_runs(self) -> int:
        """How many times the traced body started running so far."""
        return self._body_runs

    def record(self) -> EffectsRecord:
        """Everything seen so far (or, after the watch ended, everything it saw)."""
        if self._final is not None:
            return self._final
        effects = tuple(
            EffectRecord(kind, detail, Location(_display_path(file), line, function), count)
            for (kind, detail, file, line, function), count in self._counts.items()
        )
        notes = list(self._notes)
        if self._internal_errors:
            notes.append(
                f"the effect monitor hit {self._internal_errors} internal error(s); results may be partial"
            )
        return EffectsRecord(effects=effects, body_runs=self._body_runs, notes=tuple(notes))

    def note(self, text: str) -> None:
        if text not in self._notes:
            self._notes.append(text)

    def finish(self) -> None:
        """Freeze the record and drop every live object (frames, tracers, user containers)."""
        self._final = self.record()
        self._objects.entries.clear()
        self.roles.clear()
        self._known_codes.clear()
        self.user_frames.clear()
        self.watched_frames.clear()
        self._facts.clear()
        self.frames.clear()
        self._pending_c_calls.clear()
        self._locally_defined.clear()

    def _report(self, kind: EffectKind, detail: str, code: types.CodeType, line: int) -> None:
        key = (kind, detail, code.co_filename, line, _function_name(code))
        self._counts[key] = self._counts.get(key, 0) + 1

    def _failed(self) -> None:
        self._internal_errors += 1

    def _is_user_frame(self, frame: types.FrameType | None) -> bool:
        return frame is not None and frame in self.user_frames

    # ----------------------------------------------------------------- classification

    def classify(self, frame: types.FrameType) -> int:
        """Decide once per code object what the hook must do with its frames."""
        code = frame.f_code
        role = 0
        try:
            if code is self._target_code:
                role |= TARGET | WATCH_RETURN
            if code in self._catalog.by_code:
                role |= EFFECT
            elif self._is_user_filename(code.co_filename):
                role |= USER | WATCH_RETURN
                facts = analyse_code(code, self._numpy_random.names)
                if facts.nonlocal_stores and id(code) in self._locally_defined:
                    # Its cells belong to a frame that ran during the watch: rebinding them is a
                    # trace-time local (a helper closure, or a 3.11 comprehension's ``:=``).
                    facts = dataclasses.replace(facts, nonlocal_stores=())
                self._facts[id(code)] = facts
                self._locally_defined.update(id(nested) for nested in facts.nested_codes)
                for name in facts.loaded_globals:
                    value = frame.f_globals.get(name, MISSING)
                    if value is not MISSING:
                        self._objects.register(value, EffectKind.GLOBAL_WRITE, name)
            elif code.co_name in STREAM_WRITE_METHODS:
                role |= STREAM_WRITE
        except Exception:  # noqa: BLE001 - the monitor must never break the user's trace
            self._internal_errors += 1
        self.roles[id(code)] = role
        self._known_codes.append(code)
        return role

    def is_user_code(self, code: types.CodeType) -> bool:
        """Whether ``code`` is user code, without classifying it (no side effects on the watch)."""
        return self._is_user_filename(code.co_filename)

    def _is_user_filename(self, filename: str) -> bool:
        decided = self._user_files.get(filename)
        if decided is None:
            decided = self._user_files[filename] = bool(self._is_user_file(filename))
        return decided

    # ----------------------------------------------------------------- events

    def on_call(self, frame: types.FrameType, role: int) -> None:
        try:
            if role & WATCH_RETURN:
                self.watched_frames.add(frame)
            if role & USER:
                self.user_frames.add(frame)
            if role & TARGET:
                self._body_runs += 1
                self._register_target_inputs(frame)
            if role & EFFECT:
                caller = frame.f_back
                if caller is not None and self._is_user_frame(caller):
                    spec = self._catalog.by_code[frame.f_code]
                    self._report(spec.kind, spec.detail, caller.f_code, caller.f_lineno)
            elif role & STREAM_WRITE:
                self._check_python_stream_write(frame)
            if role & USER:
                self._enter_user_frame(frame)
        except Exception:  # noqa: BLE001
            self._internal_errors += 1

    def on_watched_frame_event(self, frame: types.FrameType, event: str, arg: Any) -> None:
        """``return``, ``c_call``, ``c_return`` or ``c_exception`` in a user or target frame."""
        if event == "c_call":
            if frame in self.user_frames:
                self.on_user_c_call(frame, arg)
        elif event == "return":
            self.on_return(frame)
        elif self._pending_c_calls:
            self.on_c_return(arg)

    def on_return(self, frame: types.FrameType) -> None:
        try:
            self.watched_frames.discard(frame)
            self.user_frames.discard(frame)
            self.frames.leave(frame)
            code = frame.f_code
            if code is self._target_code and self.roles.get(id(code), 0) & USER:
                self.frames.check_unattributed_changes(code)
        except Exception:  # noqa: BLE001
            self._internal_errors += 1

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

    # ----------------------------------------------------------------- helpers

    def _register_target_inputs(self, frame: types.FrameType) -> None:
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & _CO_VARARGS) + bool(code.co_flags & _CO_VARKEYWORDS)
        local_values = frame.f_locals
        for name in code.co_varnames[:count]:
            if name in local_values:
                self._objects.register(local_values[name], EffectKind.ARGUMENT_MUTATION, name)
        self._register_closure(frame)

    def _register_closure(self, frame: types.FrameType) -> None:
        local_values = frame.f_locals
        for name in frame.f_code.co_freevars:
            if name != "__class__" and name in local_values:
                self._objects.register(local_values[name], EffectKind.CLOSURE_MUTATION, name)

    def _enter_user_frame(self, frame: types.FrameType) -> None:
        code = frame.f_code
        facts = self._facts.get(id(code))
        if facts is None:
            return
        if code.co_freevars and code is not self._target_code and id(code) not in self._locally_defined:
            self._register_closure(frame)
        self.frames.enter(frame, facts)

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


#: Comprehensions that 3.12+ inlines into their function (PEP 709); 3.11 runs them as frames.
_INLINED_COMPREHENSIONS = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>"})


def _function_name(code: types.CodeType) -> str:
    """``Model.apply`` for methods, ``step`` for a function nested in another (no ``<locals>`` noise).

    A list, set or dict comprehension is named after its function on every version, as
    3.12+ reports it (a generator expression stays ``<genexpr>``: it is a frame everywhere).
    """
    qualname = getattr(code, "co_qualname", code.co_name)
    if code.co_name in _INLINED_COMPREHENSIONS:
        qualname = qualname.rsplit(".", 1)[0] if "." in qualname else qualname
        qualname = qualname.removesuffix(".<locals>")
    return qualname.rsplit("<locals>.", 1)[-1]


def _display_path(filename: str) -> str:
    """A path relative to the working directory when the file is inside it (as the user typed it)."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if relative.startswith(os.pardir) else relative
