"""The Python 3.11 back end: a trace hook for calls, a profile hook only while user code runs.

On CPython 3.11 a Python profile hook is called for every call, return, C call and C return
of every frame: tracing a flax model fires over a million of them, nearly all in JAX's and
the library's own code, and each is a Python call (the nnx GPT's step: 149 ms to trace
without a hook, 290 ms with an empty one). A *trace* hook (``sys.settrace``) is called only
when a Python frame starts, and a frame it returns None for raises no other event. So:

* the trace hook sees every frame start, decides what the code is (``EffectWatch.classify``,
  one dict lookup once known) and makes the same ``on_call`` as the profile hook did;
* user frames get a local trace function for their ``return`` (and, for the few that need
  them, ``line`` events, passed on to ``FrameChecks.on_line``);
* the profile hook, which alone sees C calls (``print``, ``time.time``, ``list.append``), is
  installed only while a user frame is the running one. A library function called from user
  code switches it off and gets a local trace function for its return, which switches it
  back on; a user frame returning to library code switches it off.

A library function called with a handed builtin among its arguments
(``jax.tree_util.tree_map(print, grads)``, a ``functools.partial`` of print) keeps the profile
hook on below it, so the print it makes is seen as before. A library that stored print
earlier (a callback given to its constructor) and calls it during the trace is not seen
(the 3.12+ back end misses it too once that call site first called something else).

When a trace or profile function is already set (a debugger, coverage, a Python profiler),
``monitor.py`` keeps the previous design, a profile hook for everything, chained to it.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

from jitscope.effects.watch import WATCH_RETURN, EffectWatch

_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


def gating_available() -> bool:
    """True when no trace or profile function is set on this thread (nothing to chain to)."""
    return sys.gettrace() is None and sys.getprofile() is None


@contextlib.contextmanager
def gated_hooks_installed(watch: EffectWatch) -> Iterator[None]:
    """Watch ``watch``'s events with the trace hook and a profile hook gated to user frames."""
    thread_id = threading.get_ident()
    hooks = _GatedHooks(watch)
    watch.frames.lines_forwarded = True
    sys.settrace(hooks.on_frame_start)
    try:
        yield
    finally:
        if threading.get_ident() == thread_id:
            tracer, profiler = sys.gettrace(), sys.getprofile()
            sys.settrace(None)
            sys.setprofile(None)
            if tracer is not hooks.on_frame_start or profiler not in (None, hooks.c_hook):
                watch.note(
                    "another tracer or profiler replaced the effect monitor during tracing; "
                    "later effects were not seen"
                )


class _GatedHooks:
    """The trace hook, the local trace functions and the gated profile hook of one watch."""

    def __init__(self, watch: EffectWatch) -> None:
        self.watch = watch
        self.profiling = False
        #: Library frames called from a user frame and running now (their return re-enables profiling).
        self.boundaries: set[types.FrameType] = set()
        #: Those of them handed a builtin (``tree_map(print, ...)``): profiling stays on below them.
        self.kept: set[types.FrameType] = set()
        self.c_hook = _make_c_call_hook(watch)
        # Bound once: the trace hook runs for every Python call while the watch is on.
        self.on_frame_start = self._make_trace_hook()

    def _profile(self, on: bool) -> None:
        if on is not self.profiling:
            sys.setprofile(self.c_hook if on else None)
            self.profiling = on

    def _make_trace_hook(self) -> Any:
        watch = self.watch
        roles_get = watch.roles.get
        classify = watch.classify
        on_call = watch.on_call
        watched_frames = watch.watched_frames
        boundaries = self.boundaries
        on_user_frame_event = self.on_user_frame_event
        on_boundary_event = self.on_boundary_event
        enter_library = self.enter_library

        def on_frame_start(frame: types.FrameType, event: str, arg: Any) -> Any:
            try:
                role = roles_get(id(frame.f_code))
                if role is None:
                    role = classify(frame)
                if role & WATCH_RETURN:
                    frame.f_trace_lines = False  # FrameChecks turns them on where it needs them
                    on_call(frame, role)
                    if not self.profiling:
                        self._profile(True)
                    return on_user_frame_event
                if role:
                    on_call(frame, role)
                if self.profiling and frame.f_back in watched_frames:
                    enter_library(frame)
                    boundaries.add(frame)
                    frame.f_trace_lines = False
                    return on_boundary_event
            except Exception:  # noqa: BLE001 - an exception here would switch tracing off
                watch._failed()
            return None

        return on_frame_start

    def enter_library(self, frame: types.FrameType) -> None:
        """A library function called by user code: profiling stops unless it was handed print."""
        if _handed_a_builtin(frame, self.watch.handed_builtins):
            self.kept.add(frame)
        elif not self.kept:
            self._profile(False)

    def on_user_frame_event(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        try:
            if event == "line":
                self.watch.frames.on_line(frame, event, arg)
            elif event == "return":
                self.watch.on_return(frame)
                self._profile(frame.f_back in self.watch.watched_frames or bool(self.kept))
        except Exception:  # noqa: BLE001
            self.watch._failed()
        return self.on_user_frame_event

    def on_boundary_event(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        # A generator keeps its local trace function when resumed by library code: only
        # frames entered from user code this time are boundaries.
        if event == "return" and frame in self.boundaries:
            self.boundaries.discard(frame)
            self.kept.discard(frame)
            self._profile(True)
        return self.on_boundary_event


def _make_c_call_hook(watch: EffectWatch) -> Any:
    """The profile hook while user code runs: C calls of user frames, print called by library code."""
    watched_frames = watch.watched_frames
    on_watched_frame_event = watch.on_watched_frame_event
    on_library_builtin_call = watch.on_library_builtin_call
    print_builtin = print

    def c_call_hook(frame: types.FrameType, event: str, arg: Any) -> None:
        # "call" and "return" are the trace hook's: it saw them first.
        if event == "call" or event == "return":
            return
        if frame in watched_frames:
            on_watched_frame_event(frame, event, arg)
        elif arg is print_builtin and event == "c_call":
            on_library_builtin_call(frame, arg)

    return c_call_hook


def _handed_a_builtin(frame: types.FrameType, handed: dict[int, Any]) -> bool:
    """Whether a handed builtin (print), or a partial of one, is among the frame's arguments."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    varargs = bool(code.co_flags & _CO_VARARGS)
    count += varargs + bool(code.co_flags & _CO_VARKEYWORDS)
    if not count:
        return False
    local_values = frame.f_locals
    for name in code.co_varnames[:count]:
        value = local_values.get(name)
        values = value if type(value) is tuple or type(value) is dict else (value,)
        for item in values.values() if type(values) is dict else values:
            while type(item) is functools.partial:
                item = item.func
            if id(item) in handed:
                return True
    return False
