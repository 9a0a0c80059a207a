"""The effect monitor's event source on Python 3.12+: ``sys.monitoring`` (PEP 669).

A profile hook is called for every event of every frame, and on CPython 3.11 merely
having one set doubles tracing time. ``sys.monitoring`` lets a callback return
``DISABLE`` for a code location, after which that location never calls it again: JAX's
code is looked at once and then runs at full speed, while user code keeps reporting.
Its CALL event also carries the callable itself, so Cython functions (NumPy random)
need no line events.

The callbacks translate events into the same ``EffectWatch`` calls the profile hook
makes, so both back ends report the same records. ``sys.monitoring`` is process-wide,
so events from other threads are ignored (never disabled: another thread's user code
may need them later in this watch).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

from jitscope.effects.watch import USER, WATCH_RETURN, EffectWatch

#: Tool ids tried in order (0 debugger and 1 coverage are left to those tools).
_CANDIDATE_TOOL_IDS = (2, 3, 4, 5)


def monitoring_available() -> bool:
    return hasattr(sys, "monitoring")


def _claim_tool_id() -> int | None:
    monitoring: Any = getattr(sys, "monitoring")  # noqa: B009 - absent before 3.12 (mypy targets 3.11)
    for tool_id in _CANDIDATE_TOOL_IDS:
        try:
            monitoring.use_tool_id(tool_id, "jitscope-effects")
        except ValueError:  # taken by another tool
            continue
        return tool_id
    return None


@contextlib.contextmanager
def monitor_events(watch: EffectWatch) -> Iterator[bool]:
    """Feed ``watch`` from ``sys.monitoring`` while the block runs; yields False if no tool id was free."""
    monitoring: Any = getattr(sys, "monitoring")  # noqa: B009
    tool_id = _claim_tool_id()
    if tool_id is None:
        yield False
        return
    events = monitoring.events
    callbacks = _make_callbacks(watch, threading.get_ident(), monitoring.DISABLE)
    for event, callback in callbacks.items():
        monitoring.register_callback(tool_id, getattr(events, event), callback)
    watch.frames.numpy_calls_by_line = False
    wanted = 0
    for event in callbacks:
        wanted |= getattr(events, event)
    try:
        # Locations disabled by an earlier watch (or another tool) must report again.
        monitoring.restart_events()
        monitoring.set_events(tool_id, wanted)
        yield True
    finally:
        monitoring.set_events(tool_id, 0)
        for event in callbacks:
            monitoring.register_callback(tool_id, getattr(events, event), None)
        monitoring.free_tool_id(tool_id)


def _make_callbacks(watch: EffectWatch, thread_id: int, disable: object) -> dict[str, Any]:
    """One callback per event; each returns ``disable`` for locations that never matter."""
    get_ident = threading.get_ident
    get_frame = sys._getframe
    roles_get = watch.roles.get
    classify = watch.classify
    is_user_code = watch.is_user_code
    user_frames = watch.user_frames
    watched_frames = watch.watched_frames
    pending = watch._pending_c_calls
    handed = watch.handed_builtins

    def role_of(code: types.CodeType) -> int:
        role = roles_get(id(code))
        return classify(get_frame(2)) if role is None else role

    def on_start(code: types.CodeType, offset: int) -> object:
        if get_ident() != thread_id:
            return None
        role = role_of(code)
        if not role:
            return disable
        watch.on_call(get_frame(1), role)
        return None

    def on_throw(code: types.CodeType, offset: int, exception: BaseException) -> None:
        # ``generator.throw()`` resumes a frame with PY_THROW, not PY_RESUME (a profile hook
        # sees "call" for both). It cannot be disabled, and is rare: no DISABLE needed.
        if get_ident() == thread_id:
            frame = get_frame(1)
            role = roles_get(id(code))
            if role is None:
                role = classify(frame)
            if role:
                watch.on_call(frame, role)

    def on_return(code: types.CodeType, offset: int, value: object) -> object:
        if get_ident() != thread_id:
            return None
        frame = get_frame(1)
        if frame in watched_frames:
            watch.on_return(frame)
        elif not roles_get(id(code), 0) & WATCH_RETURN:
            return disable
        return None

    def on_unwind(code: types.CodeType, offset: int, exception: BaseException) -> None:
        if get_ident() == thread_id:
            frame = get_frame(1)
            if frame in watched_frames:
                watch.on_return(frame)

    def on_call(code: types.CodeType, offset: int, function: object, first_arg: object) -> object:
        if get_ident() != thread_id:
            return None
        role = roles_get(id(code))
        if role is None:
            # A frame that started before the watch: classifying it would register the
            # globals it reads as if user code had run; only decide whether to disable.
            return None if is_user_code(code) else disable
        if not role & USER:
            if id(function) in handed:  # `tree_map(print, grads)`: keep watching this location
                watch.on_library_builtin_call(get_frame(1), function)
                return None
            return disable
        frame = get_frame(1)
        if frame in user_frames:
            watch.on_user_call_event(frame, function, first_arg)
        return None

    def on_c_return(code: types.CodeType, offset: int, function: object, first_arg: object) -> None:
        if pending and get_ident() == thread_id:
            watch.on_c_return(function)

    return {
        "PY_START": on_start,
        "PY_RESUME": on_start,
        "PY_THROW": on_throw,
        "PY_RETURN": on_return,
        "PY_YIELD": on_return,
        "PY_UNWIND": on_unwind,
        "CALL": on_call,
        "C_RETURN": on_c_return,
        "C_RAISE": on_c_return,
    }
