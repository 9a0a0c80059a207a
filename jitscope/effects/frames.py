"""Per-frame checks for what a profile hook cannot see as events.

Stores (``d[k] = v``, ``obj.x = v``, ``global x``) and NumPy's Cython random calls
raise no profile event. For each running user frame whose bytecode contains them,
``FrameChecks`` keeps a small snapshot taken when the frame started, compares it
when the frame returns (or earlier, before a callee could take the blame), and turns
on line events just for frames that may call NumPy random functions.
"""

from __future__ import annotations

import builtins
import functools
import sys
import types
from collections.abc import Callable
from typing import Any

from jitscope.effects.bytecode import (
    HANDING_BUILTINS,
    CodeFacts,
    HandedCall,
    ObjectPath,
    StoreSite,
    analyse_code,
)
from jitscope.effects.catalog import NumpyRandomSupport
from jitscope.effects.state import (
    MISSING,
    PreexistingObjects,
    class_attribute,
    resolve_path,
    static_attribute,
)
from jitscope.model.effects import EffectKind

#: ``report(kind, detail, code, line)``: count one effect at ``line`` of ``code``.
Reporter = Callable[[EffectKind, str, types.CodeType, int], None]
#: ``report_handed(frame, builtin)``: a handed builtin (print) called from C for the frame's current line.
HandedReporter = Callable[[types.FrameType, Any], None]
#: ``map`` and ``filter`` themselves: a call site's callee must still be one when it runs.
_HANDING_BUILTINS = tuple(getattr(builtins, name) for name in HANDING_BUILTINS)


def _no_new_frame_tracing(frame: types.FrameType, event: str, arg: object) -> None:
    """Global trace function: line events are wanted only on frames given ``f_trace`` explicitly."""


class FrameChecks:
    """Snapshots and checks for the user frames that are running now."""

    def __init__(
        self,
        objects: PreexistingObjects,
        numpy_random: NumpyRandomSupport,
        report: Reporter,
        note: Callable[[str], None],
        failed: Callable[[], None],
        handed_builtins: dict[int, Any] | None = None,
        report_handed: HandedReporter | None = None,
    ) -> None:
        self._objects = objects
        self._numpy_random = numpy_random
        self._report = report
        self._note = note
        self._failed = failed
        self._snapshots: dict[types.FrameType, dict[object, object]] = {}
        self._facts: dict[types.FrameType, CodeFacts] = {}
        self._random_lines: dict[types.FrameType, dict[int, list[ObjectPath]]] = {}
        self._handed_builtins = handed_builtins or {}
        self._report_handed = report_handed
        self._handed_lines: dict[types.FrameType, dict[int, list[HandedCall]]] = {}
        #: code of a function a local callee was made by -> whether it returns a partial
        self._partial_factories: dict[types.CodeType, bool] = {}
        self._line_tracing = False
        #: Find NumPy random calls with line events (profile hooks cannot see Cython calls;
        #: sys.monitoring's CALL event can, so that backend turns this off).
        self.numpy_calls_by_line = True

    def clear(self) -> None:
        self._snapshots.clear()
        self._facts.clear()
        self._random_lines.clear()
        self._handed_lines.clear()

    # ----------------------------------------------------------------- frame start and end

    def enter(self, frame: types.FrameType, facts: CodeFacts) -> None:
        """A user frame starts: settle its caller, snapshot what its stores may replace."""
        if facts.stores:
            self.settle(frame.f_back)
        if facts.watches_return:
            self._snapshots[frame] = self._snapshot(frame, facts)
            self._facts[frame] = facts
        if facts.call_candidates and self.numpy_calls_by_line and self._numpy_random.owner_types:
            self._watch_random_lines(frame, facts)
        if facts.handed_calls and self.numpy_calls_by_line and self._report_handed is not None:
            self._watch_handed_lines(frame, facts)

    def leave(self, frame: types.FrameType) -> None:
        """A user frame returns (or yields): report every store that changed watched state."""
        snapshot = self._snapshots.pop(frame, None)
        facts = self._facts.pop(frame, None)
        self._random_lines.pop(frame, None)
        self._handed_lines.pop(frame, None)
        if snapshot is not None and facts is not None:
            self._check_name_stores(frame, facts, snapshot)
            self._check_store_sites(frame, facts, snapshot)

    def settle(self, frame: types.FrameType | None) -> None:
        """Check a running frame's stores now, before a callee or C call could take the blame.

        Stores are compared when a frame returns; a change the caller made before calling
        a helper that writes the same object would otherwise be reported at the helper's line.
        """
        if frame is None:
            return
        snapshot = self._snapshots.get(frame)
        facts = self._facts.get(frame)
        if snapshot is not None and facts is not None and facts.stores:
            self._check_store_sites(frame, facts, snapshot)

    def check_unattributed_changes(self, code: types.CodeType) -> None:
        """At the end of a body run: argument or closure containers changed by code not pinned to a line.

        Globals are left out: library code may legitimately fill a container the user
        imported (a registry, a cache), and user-code writes to them are caught per site.
        """
        for entry in self._objects.changed_plain_containers():
            if entry.kind is EffectKind.GLOBAL_WRITE:
                continue
            entry.refresh()
            detail = f"{entry.label} changed (call site not found)"
            self._report(entry.kind, detail, code, code.co_firstlineno)

    # ----------------------------------------------------------------- stores

    @staticmethod
    def _snapshot(frame: types.FrameType, facts: CodeFacts) -> dict[object, object]:
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

    def _check_name_stores(
        self, frame: types.FrameType, facts: CodeFacts, snapshot: dict[object, object]
    ) -> None:
        seen: set[str] = set()
        for store in facts.global_stores:
            if store.name in seen:  # several stores of one name: report the first site once
                continue
            seen.add(store.name)
            if frame.f_globals.get(store.name, MISSING) is not snapshot.get(("global", store.name)):
                detail = f"global '{store.name}' {'deleted' if store.deleting else 'assigned'}"
                self._report(EffectKind.GLOBAL_WRITE, detail, frame.f_code, store.line)
        for store in facts.nonlocal_stores:
            if store.name in seen:
                continue
            seen.add(store.name)
            if frame.f_locals.get(store.name, MISSING) is not snapshot.get(("nonlocal", store.name)):
                detail = f"nonlocal '{store.name}' rebound"
                self._report(EffectKind.CLOSURE_MUTATION, detail, frame.f_code, store.line)

    def _check_store_sites(
        self, frame: types.FrameType, facts: CodeFacts, snapshot: dict[object, object]
    ) -> None:
        for site in facts.stores:
            before = snapshot.get(site)
            if isinstance(before, tuple):
                module, old_value = before
                new_value = static_attribute(module, site.attribute)
                if new_value is not old_value:
                    snapshot[site] = (module, new_value)
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

    # ----------------------------------------------------------------- NumPy random calls

    def on_line(self, frame: types.FrameType, event: str, arg: object) -> object:
        """Local trace function of frames that may call NumPy random functions or hand print to C code."""
        try:
            lines = self._random_lines.get(frame)
            handed = self._handed_lines.get(frame)
            if lines is None and handed is None:
                return None
            if event == "line":
                line = frame.f_lineno
                for callee in lines.get(line, ()) if lines is not None else ():
                    if self._numpy_random_verdict(callee, frame):
                        self._report(EffectKind.RANDOMNESS, f"{callee}()", frame.f_code, line)
                for call in handed.get(line, ()) if handed is not None else ():
                    builtin = self._handed_builtin(call, frame)
                    if builtin is not None and self._report_handed is not None:
                        self._report_handed(frame, builtin)
        except Exception:  # noqa: BLE001 - the monitor must never break the user's trace
            self._failed()
        return self.on_line

    # ----------------------------------------------------------------- builtins called from C

    def _watch_handed_lines(self, frame: types.FrameType, facts: CodeFacts) -> None:
        """Line events for frames that may call a partial of print, or ``map(print, ...)``.

        Profile hooks see no event when C code (``functools.partial.__call__``, ``map``'s
        iteration) calls print; the call site is found in the bytecode and checked per line.
        """
        lines: dict[int, list[HandedCall]] = {}
        for call in facts.handed_calls:
            if self._handed_builtin(call, frame, at_frame_start=True) is not False:
                lines.setdefault(call.line, []).append(call)
        if not lines or not self._enable_line_tracing("print called through a partial or map/filter was"):
            return
        self._handed_lines[frame] = lines
        frame.f_trace_lines = True
        frame.f_trace = self.on_line

    def _handed_builtin(self, call: HandedCall, frame: types.FrameType, at_frame_start: bool = False) -> Any:
        """The builtin ``call`` makes C code call now (print), None if none; at frame start,
        False when the site can be ruled out for this frame and True when it cannot."""
        callee = resolve_path(call.callee, frame)
        if callee is MISSING and call.callee.steps:
            callee = class_attribute(call.callee, frame)
        if callee is MISSING:
            if not at_frame_start:
                return None
            if call.callee.steps:
                return False  # an attribute found in no instance, module or class dict: a method
            if call.maker is not None:
                return self._makes_partial(call.maker, frame)
            return True
        target: object
        if type(callee) is functools.partial:
            target = callee.func
            while type(target) is functools.partial:
                target = target.func
        elif call.first_arg is not None and any(callee is fn for fn in _HANDING_BUILTINS):
            target = resolve_path(call.first_arg, frame)
            if target is MISSING and at_frame_start:
                return True
        else:
            return False if at_frame_start else None
        if id(target) in self._handed_builtins:
            return True if at_frame_start else target
        if at_frame_start and call.callee.root == "fast":
            return True  # a local (or an argument rebound later) may still become a partial
        return False if at_frame_start else None

    def _makes_partial(self, maker: ObjectPath, frame: types.FrameType) -> bool:
        """``log = make()``: whether ``make`` is ``functools.partial`` (under any name) or a function
        of the user's that returns one (``def make_logger(p): return partial(print, p)``)."""
        made_by = resolve_path(maker, frame)
        if made_by is functools.partial or made_by is MISSING:
            return True
        code = getattr(made_by, "__code__", None) if isinstance(made_by, types.FunctionType) else None
        if code is None:
            return False
        known = self._partial_factories.get(code)
        if known is None:
            known = self._partial_factories[code] = analyse_code(code).returns_partial
        return known

    def _watch_random_lines(self, frame: types.FrameType, facts: CodeFacts) -> None:
        lines: dict[int, list[ObjectPath]] = {}
        for candidate in facts.call_candidates:
            if self._numpy_random_verdict(candidate.callee, frame, at_frame_start=True) is not False:
                lines.setdefault(candidate.line, []).append(candidate.callee)
        if not lines or not self._enable_line_tracing():
            return
        self._random_lines[frame] = lines
        frame.f_trace_lines = True
        frame.f_trace = self.on_line

    def _numpy_random_verdict(
        self, callee: ObjectPath, frame: types.FrameType, at_frame_start: bool = False
    ) -> bool | None:
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

    def _enable_line_tracing(self, what: str = "numpy.random calls were") -> bool:
        """Turn on line events (for the few frames that need them) unless another tracer owns them.

        Only NumPy random calls and print handed to C code need them; ``sys.settrace``
        with a global function that returns None keeps every other frame free of line events.
        """
        if self._line_tracing:
            return True
        if sys.gettrace() is not None:
            self._note(f"{what} not watched: another tracer (debugger or coverage) is active")
            return False
        sys.settrace(_no_new_frame_tracing)
        self._line_tracing = True
        return True

    def disable_line_tracing(self) -> None:
        if self._line_tracing and sys.gettrace() is _no_new_frame_tracing:
            sys.settrace(None)
        self._line_tracing = False
