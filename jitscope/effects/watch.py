"""The state of one effect watch and what it does with each profile event.

``monitor.watch_effects`` owns the hook; this module decides, per code object and
per event, what the event means: a catalogued call from user code, a mutation of a
pre-existing container, the traced body starting again. See :mod:`jitscope.effects` for
the overall design and ``frames`` for the store and NumPy checks.
"""

from __future__ import annotations

import dataclasses
import os
import types
from typing import Any

from jitscope.effects.bytecode import CodeFacts, analyse_code
from jitscope.effects.c_calls import CCallChecks
from jitscope.effects.catalog import (
    STREAM_WRITE_METHODS,
    EffectCatalog,
    build_effect_catalog,
    numpy_random_support,
)
from jitscope.effects.frames import FrameChecks
from jitscope.effects.state import (
    MISSING,
    PreexistingObjects,
    WatchedObject,
    user_type_predicate,
)
from jitscope.model.common import Location
from jitscope.model.effects import EffectKind, EffectRecord, EffectsRecord
from jitscope.userframes import IsUserFile

# Per-code roles, cached as bit flags so the hook decides with one dict lookup.
USER = 1  # the code is user code: its calls and stores are watched
TARGET = 2  # the traced function's body
EFFECT = 4  # a catalogued Python function (logging.info, subprocess.run, ...)
STREAM_WRITE = 8  # a library ``write`` method: an effect if called on sys.stdout/stderr
WATCH_RETURN = 16  # the hook must pass this code's frame events on (user code, the target)

_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


class EffectWatch(CCallChecks):
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
