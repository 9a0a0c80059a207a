"""The Python-side effect monitor that runs while JAX traces a user's function.

``watch_effects`` installs a profile hook (``sys.setprofile``: Python 3.11 has no
``sys.monitoring``) for the duration of a trace and records every side effect that
only happens at trace time, with the file, line and function in the user's code:

* calls, seen as profile events: ``c_call`` carries the C function (``print``,
  ``time.time``, ``list.append`` bound to its list) and ``call`` the new frame of a
  Python function (``logging.info``, ``subprocess.run``);
* stores, which are opcodes and raise no event: the bytecode of each user function is
  read once (``effects_bytecode``) and the objects its stores can touch are compared
  with a snapshot when the frame returns (``effects_state``);
* NumPy random draws, which are Cython calls and raise no event either: found in the
  bytecode and confirmed by line events on just those frames.

An effect is reported only when its *immediate caller* is user code, so JAX's own
logging and clock reads are never reported while the user's helpers in other modules
are. The hook's hot path is one dict lookup per event (per-code decisions are cached),
and it never raises: a failure inside the monitor is counted in the record's notes.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

from jitscope.model.common import Location
from jitscope.model.effects import EffectKind, EffectRecord, EffectsRecord
from jitscope.tracing.effects_bytecode import CodeFacts, ObjectPath, StoreSite, analyse_code
from jitscope.tracing.effects_catalog import (
    MUTATING_METHODS,
    STREAM_WRITE_METHODS,
    EffectCatalog,
    build_effect_catalog,
    numpy_random_support,
)
from jitscope.tracing.effects_state import (
    MISSING,
    PreexistingObjects,
    WatchedObject,
    resolve_path,
    static_attribute,
    user_type_predicate,
)
from jitscope.tracing.effects_usercode import IsUserFile, default_is_user_file

ProfileHook = Callable[[types.FrameType, str, Any], object]

# Per-code roles, cached as bit flags so the hook decides with one dict lookup.
_USER = 1  # the code is user code: its calls and stores are watched
_TARGET = 2  # the traced function's body
_EFFECT = 4  # a catalogued Python function (logging.info, subprocess.run, ...)
_STREAM_WRITE = 8  # a library ``write`` method: an effect if called on sys.stdout/stderr
_WATCH_RETURN = 16  # compare state when a frame of this code returns
_NO_CALL_WORK = 0

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
        self._roles: dict[types.CodeType, int] = {}
        self._facts: dict[types.CodeType, CodeFacts] = {}
        # Code defined inside code that ran during the watch: its closures hold values
        # created while tracing, not pre-existing state.
        self._locally_defined: set[types.CodeType] = set()
        self._frame_snapshots: dict[types.FrameType, dict[object, object]] = {}
        self._frame_random_lines: dict[types.FrameType, dict[int, list[ObjectPath]]] = {}
        self._pending_c_calls: list[tuple[object, WatchedObject | None, str, types.FrameType, int]] = []
        self._print_depth = 0
        self._counts: dict[tuple[EffectKind, str, str, int, str], int] = {}
        self._notes: list[str] = []
        self._internal_errors = 0
        self._line_tracing = False
        self._body_runs = 0
        self._final: EffectsRecord | None = None

    # ----------------------------------------------------------------- results

    @property
    def body_runs(self) -> int:
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
            notes.append(f"the effect monitor hit {self._internal_errors} internal error(s); results may be partial")
        return EffectsRecord(effects=effects, body_runs=self._body_runs, notes=tuple(notes))

    def note(self, text: str) -> None:
        if text not in self._notes:
            self._notes.append(text)

    def finish(self) -> None:
        """Freeze the record and drop every live object (frames, tracers, user containers)."""
        self._final = self.record()
        self._objects.entries.clear()
        self._roles.clear()
        self._facts.clear()
        self._frame_snapshots.clear()
        self._frame_random_lines.clear()
        self._pending_c_calls.clear()
        self._locally_defined.clear()

    def _report(self, kind: EffectKind, detail: str, code: types.CodeType, line: int) -> None:
        key = (kind, detail, code.co_filename, line, _function_name(code))
        self._counts[key] = self._counts.get(key, 0) + 1

    def _is_user_code(self, code: types.CodeType | None) -> bool:
        return code is not None and bool(self._roles.get(code, 0) & _USER)

    # ----------------------------------------------------------------- classification

    def classify(self, frame: types.FrameType) -> int:
        """Decide once per code object what the hook must do with its frames."""
        code = frame.f_code
        role = 0
        try:
            if code is self._target_code:
                role |= _TARGET | _WATCH_RETURN
            if code in self._catalog.by_code:
                role |= _EFFECT
            elif self._is_user_filename(code.co_filename):
                role |= _USER
                facts = analyse_code(code, self._numpy_random.names)
                self._facts[code] = facts
                self._locally_defined.update(facts.nested_codes)
                if facts.watches_return:
                    role |= _WATCH_RETURN
                for name in facts.loaded_globals:
                    value = frame.f_globals.get(name, MISSING)
                    if value is not MISSING:
                        self._objects.register(value, EffectKind.GLOBAL_WRITE, name)
            elif code.co_name in STREAM_WRITE_METHODS:
                role |= _STREAM_WRITE
        except Exception:  # noqa: BLE001 - the monitor must never break the user's trace
            self._internal_errors += 1
        self._roles[code] = role
        return role

    def _is_user_filename(self, filename: str) -> bool:
        decided = self._user_files.get(filename)
        if decided is None:
            decided = self._user_files[filename] = bool(self._is_user_file(filename))
        return decided

    # ----------------------------------------------------------------- events

    def on_call(self, frame: types.FrameType, role: int) -> None:
        try:
            if role & _TARGET:
                self._body_runs += 1
                self._register_target_inputs(frame)
            if role & _EFFECT:
                caller = frame.f_back
                if caller is not None and self._is_user_code(caller.f_code):
                    spec = self._catalog.by_code[frame.f_code]
                    self._report(spec.kind, spec.detail, caller.f_code, caller.f_lineno)
            elif role & _STREAM_WRITE:
                self._check_python_stream_write(frame)
            if role & _USER:
                self._enter_user_frame(frame)
        except Exception:  # noqa: BLE001
            self._internal_errors += 1

    def on_return(self, frame: types.FrameType) -> None:
        try:
            code = frame.f_code
            snapshot = self._frame_snapshots.pop(frame, None)
            facts = self._facts.get(code)
            if facts is not None and snapshot is not None:
                self._check_name_stores(frame, facts, snapshot)
                self._check_store_sites(frame, facts, snapshot)
            self._frame_random_lines.pop(frame, None)
            if code is self._target_code:
                self._check_unattributed_changes(code)
        except Exception:  # noqa: BLE001
            self._internal_errors += 1

    def on_user_c_call(self, frame: types.FrameType, function: Any) -> None:
        try:
            spec = self._catalog.by_callable.get(function)
            if spec is not None:
                self._report(spec.kind, spec.detail, frame.f_code, frame.f_lineno)
                if spec.kind is EffectKind.PRINT:
                    # print() writes through sys.stdout.write: do not report that write again.
                    self._print_depth += 1
                    self._pending_c_calls.append((function, None, "print", frame, frame.f_lineno))
                return
            owner = getattr(function, "__self__", None)
            if owner is None or isinstance(owner, types.ModuleType):
                return
            name: str = getattr(function, "__name__", "")
            if _is_standard_stream(owner):
                if name in STREAM_WRITE_METHODS:
                    self._report(EffectKind.STDOUT, f"{_stream_name(owner)}.{name}()", frame.f_code, frame.f_lineno)
                return
            entry = self._objects.lookup(owner)
            if entry is not None:
                if name in MUTATING_METHODS:
                    self._pending_c_calls.append((function, entry, name, frame, frame.f_lineno))
                return
            method_spec = self._catalog.spec_for_method(owner, name)
            if method_spec is not None:
                self._report(method_spec.kind, method_spec.detail, frame.f_code, frame.f_lineno)
        except Exception:  # noqa: BLE001
            self._internal_errors += 1

    def on_c_return(self, function: Any) -> None:
        """A C call ended (``c_return`` or ``c_exception``): settle a pending mutation check."""
        try:
            if not self._pending_c_calls or self._pending_c_calls[-1][0] is not function:
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

    def on_line(self, frame: types.FrameType, event: str, arg: object) -> object:
        """Local trace function of frames that may call NumPy random functions."""
        try:
            lines = self._frame_random_lines.get(frame)
            if lines is None:
                return None
            if event == "line":
                for callee in lines.get(frame.f_lineno, ()):
                    if self._numpy_random_verdict(callee, frame):
                        self._report(EffectKind.RANDOMNESS, f"{callee}()", frame.f_code, frame.f_lineno)
        except Exception:  # noqa: BLE001
            self._internal_errors += 1
        return self.on_line

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
        facts = self._facts.get(code)
        if facts is None:
            return
        if code.co_freevars and code is not self._target_code and code not in self._locally_defined:
            self._register_closure(frame)
        if facts.watches_return:
            self._frame_snapshots[frame] = self._snapshot_frame(frame, facts)
        if facts.call_candidates and self._numpy_random.owner_types:
            self._watch_random_lines(frame, facts)

    def _snapshot_frame(self, frame: types.FrameType, facts: CodeFacts) -> dict[object, object]:
        """Values that stores in this frame may replace, taken before it runs."""
        snapshot: dict[object, object] = {}
        for store in facts.global_stores:
            snapshot[("global", store.name)] = frame.f_globals.get(store.name, MISSING)
        for store in facts.nonlocal_stores:
            snapshot[("nonlocal", store.name)] = frame.f_locals.get(store.name, MISSING)
        for site in facts.stores:
            # Module attribute writes (``config.DEBUG = True``): remember the old value now.
            if site.operation == "attr" and site.target is not None:
                owner = resolve_path(site.target, frame)
                if isinstance(owner, types.ModuleType):
                    snapshot[site] = (owner, static_attribute(owner, site.attribute))
        return snapshot

    def _check_name_stores(self, frame: types.FrameType, facts: CodeFacts, snapshot: dict[object, object]) -> None:
        seen: set[str] = set()
        for store in facts.global_stores:
            if store.name in seen:  # several stores of one name: report the first site once
                continue
            seen.add(store.name)
            if frame.f_globals.get(store.name, MISSING) is not snapshot.get(("global", store.name)):
                action = "deleted" if store.deleting else "assigned"
                self._report(EffectKind.GLOBAL_WRITE, f"global '{store.name}' {action}", frame.f_code, store.line)
        for store in facts.nonlocal_stores:
            if store.name in seen:
                continue
            seen.add(store.name)
            if frame.f_locals.get(store.name, MISSING) is not snapshot.get(("nonlocal", store.name)):
                detail = f"nonlocal '{store.name}' rebound"
                self._report(EffectKind.CLOSURE_MUTATION, detail, frame.f_code, store.line)

    def _check_store_sites(self, frame: types.FrameType, facts: CodeFacts, snapshot: dict[object, object]) -> None:
        for site in facts.stores:
            before = snapshot.get(site)
            if isinstance(before, tuple):
                module, old_value = before
                if static_attribute(module, site.attribute) is not old_value:
                    detail = site.describe(f"module '{module.__name__}'")
                    self._report(EffectKind.GLOBAL_WRITE, detail, frame.f_code, site.line)
                continue
            if site.target is None:
                self._check_unresolved_site(frame, site)
                continue
            entry = self._objects.lookup(resolve_path(site.target, frame))
            if entry is not None and entry.changed():
                entry.refresh()
                self._report(entry.kind, site.describe(entry.label), frame.f_code, site.line)

    def _check_unresolved_site(self, frame: types.FrameType, site: StoreSite) -> None:
        """A store whose target the bytecode walk could not name: any changed watched object is its doing."""
        for entry in self._objects.changed_entries():
            entry.refresh()
            self._report(entry.kind, site.describe(entry.label), frame.f_code, site.line)

    def _check_unattributed_changes(self, code: types.CodeType) -> None:
        """At the end of a body run: argument or closure containers changed by code not pinned to a line.

        Globals are left out: library code may legitimately fill a container the user
        imported (a registry, a cache), and user-code writes to them are caught per site.
        """
        for entry in self._objects.changed_plain_containers():
            if entry.kind is EffectKind.GLOBAL_WRITE:
                continue
            entry.refresh()
            self._report(entry.kind, f"{entry.label} changed (call site not found)", code, code.co_firstlineno)

    def _check_python_stream_write(self, frame: types.FrameType) -> None:
        """``sys.stdout.write`` when sys.stdout is a Python object (e.g. a capture buffer)."""
        caller = frame.f_back
        if self._print_depth or caller is None or not self._is_user_code(caller.f_code):
            return
        code = frame.f_code
        if code.co_argcount < 1:
            return
        owner = frame.f_locals.get(code.co_varnames[0])
        if _is_standard_stream(owner):
            self._report(EffectKind.STDOUT, f"{_stream_name(owner)}.{code.co_name}()", caller.f_code, caller.f_lineno)

    def _watch_random_lines(self, frame: types.FrameType, facts: CodeFacts) -> None:
        lines: dict[int, list[ObjectPath]] = {}
        for candidate in facts.call_candidates:
            if self._numpy_random_verdict(candidate.callee, frame, at_frame_start=True) is not False:
                lines.setdefault(candidate.line, []).append(candidate.callee)
        if not lines or not self._enable_line_tracing():
            return
        self._frame_random_lines[frame] = lines
        frame.f_trace_lines = True
        frame.f_trace = self.on_line

    def _numpy_random_verdict(self, callee: ObjectPath, frame: types.FrameType, at_frame_start: bool = False) -> bool | None:
        """True if ``callee`` is a NumPy random function now, False if not, None if not known yet."""
        support = self._numpy_random
        if callee.steps:
            owner = resolve_path(ObjectPath(callee.root, callee.name, callee.steps[:-1]), frame)
            if owner is MISSING:
                return None
            if support.is_random_owner(owner):
                return True
            value = static_attribute(owner, callee.steps[-1][1])
        else:
            value = resolve_path(callee, frame)
        if value is MISSING:
            return None if at_frame_start else False
        return support.is_random_callable(value)

    def _enable_line_tracing(self) -> bool:
        """Turn on line events (for the few frames that need them) unless another tracer owns them."""
        if self._line_tracing:
            return True
        if sys.gettrace() is not None:
            self.note("numpy.random calls were not watched: another tracer (debugger or coverage) is active")
            return False
        sys.settrace(_no_new_frame_tracing)
        self._line_tracing = True
        return True

    def disable_line_tracing(self) -> None:
        if self._line_tracing and sys.gettrace() is _no_new_frame_tracing:
            sys.settrace(None)
        self._line_tracing = False


def _no_new_frame_tracing(frame: types.FrameType, event: str, arg: object) -> None:
    """Global trace function: line events are wanted only on frames given ``f_trace`` explicitly."""
    return None


def _make_profile_hook(watch: EffectWatch, previous: ProfileHook | None) -> ProfileHook:
    """The hook itself: dispatch in as few bytecodes as possible, most events do nothing."""
    roles_get = watch._roles.get
    classify = watch.classify
    on_call = watch.on_call
    on_return = watch.on_return
    on_user_c_call = watch.on_user_c_call
    on_c_return = watch.on_c_return
    pending = watch._pending_c_calls
    user, watch_return = _USER, _WATCH_RETURN

    def profile_hook(frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "c_call":
            if roles_get(frame.f_code, 0) & user:
                on_user_c_call(frame, arg)
        elif event == "call":
            role = roles_get(frame.f_code)
            if role is None:
                role = classify(frame)
            if role:
                on_call(frame, role)
        elif event == "return":
            if roles_get(frame.f_code, 0) & watch_return:
                on_return(frame)
        elif pending:
            on_c_return(arg)

    if previous is None:
        return profile_hook

    def chained_profile_hook(frame: types.FrameType, event: str, arg: Any) -> None:
        previous(frame, event, arg)
        profile_hook(frame, event, arg)

    return chained_profile_hook


@contextlib.contextmanager
def watch_effects(
    target_code: types.CodeType | None, *, is_user_file: IsUserFile | None = None
) -> Iterator[EffectWatch]:
    """Record trace-time side effects while the ``with`` block runs (on this thread).

    ``target_code`` is the code object of the traced function's body: its runs are
    counted (``body_runs``) and its arguments and closure are watched for mutation.
    ``is_user_file`` decides which files are user code (default: not the stdlib,
    site-packages, JAX/NumPy or jitscope). A Python-level profiler already installed
    keeps receiving every event and is restored on exit; a C-level one (pyinstrument,
    cProfile) cannot be chained from Python, so the watch then records nothing and says so.
    """
    watch = EffectWatch(target_code, is_user_file or default_is_user_file)
    previous = sys.getprofile()
    if previous is not None and not callable(previous):
        watch.note("side effects were not watched: a C-level profiler (e.g. pyinstrument) was active")
        try:
            yield watch
        finally:
            watch.finish()
        return
    thread_id = threading.get_ident()
    hook = _make_profile_hook(watch, previous)
    sys.setprofile(hook)
    try:
        yield watch
    finally:
        if threading.get_ident() == thread_id:
            current = sys.getprofile()
            if current is hook or current is None:
                sys.setprofile(previous)
            else:
                watch.note("another profiler replaced the effect monitor during tracing; it was left in place")
            watch.disable_line_tracing()
        watch.finish()


def _is_standard_stream(value: object) -> bool:
    return value is not None and (
        value is sys.stdout or value is sys.stderr or value is sys.__stdout__ or value is sys.__stderr__
    )


def _stream_name(stream: object) -> str:
    return "sys.stderr" if stream is sys.stderr or stream is sys.__stderr__ else "sys.stdout"


def _function_name(code: types.CodeType) -> str:
    """``Model.apply`` for methods, ``step`` for a function nested in another (no ``<locals>`` noise)."""
    qualname = getattr(code, "co_qualname", code.co_name)
    return qualname.rsplit("<locals>.", 1)[-1]


def _display_path(filename: str) -> str:
    """A path relative to the working directory when the file is inside it (as the user typed it)."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if relative.startswith(os.pardir) else relative
