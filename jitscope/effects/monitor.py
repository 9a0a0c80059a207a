"""The effect monitor's entry point: ``watch_effects`` and its ``sys.setprofile`` back end.

``watch_effects`` records, for the duration of a trace, every side effect that only happens
at trace time, with the file, line and function in the user's code. It picks the event
source: ``sys.monitoring`` on Python 3.12+ (``monitoring``), otherwise the profile hook
built here. The package docstring (:mod:`jitscope.effects`) describes the whole design.

Cost (``benchmarks/effects_overhead.py``): on CPython 3.11 merely having a profile hook
set makes tracing about 2x slower, because every instruction leaves the specialised
fast path. The hook is therefore off inside JAX's own work (binds, nested jits, a tracer's
operators, a gradient's backward pass)
(``jitscope.jaxcompat.hook_gate``), where the user's code cannot run: watched tracing costs
1.45-1.8x plain, less than an empty hook left on (it was 2.6-3.5x before the gates). On 3.12+ the
``sys.monitoring`` back end disables each library location after its first event and
costs a few percent.

Modules: ``watch`` (what each event means), ``frames`` (store and NumPy checks per
running frame), ``bytecode`` (static facts per code object), ``state`` (pre-existing
objects and snapshots), ``catalog`` (which host functions are effects),
``jitscope.userframes`` (which files are the user's).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any, Literal, cast

from jitscope.effects.monitoring import monitor_events, monitoring_available
from jitscope.effects.watch import EffectWatch
from jitscope.jaxcompat.hook_gate import hook_off_inside_jax
from jitscope.userframes import IsUserFile, default_is_user_file, user_file_predicate

__all__ = ["EffectWatch", "default_is_user_file", "user_file_predicate", "watch_effects"]

ProfileHook = Callable[[types.FrameType, str, Any], object]
#: Where events come from: "profile" (sys.setprofile), "monitoring" (sys.monitoring, 3.12+) or "auto".
Backend = Literal["auto", "profile", "monitoring"]


def _make_profile_hook(watch: EffectWatch, previous: ProfileHook | None) -> ProfileHook:
    """The hook itself: as few bytecodes as possible, since most events need no work.

    Under a profile hook CPython 3.11 runs every instruction on its slow path, so even a
    no-op hook doubles tracing time; each extra test here costs several percent more.
    Events of frames that are not watched (JAX's, the stdlib's) cost one comparison and
    one set lookup; ``call`` events one dict lookup by code id.
    """
    roles_get = watch.roles.get
    watched_frames = watch.watched_frames
    classify = watch.classify
    on_call = watch.on_call
    on_watched_frame_event = watch.on_watched_frame_event
    on_library_builtin_call = watch.on_library_builtin_call
    # Only print is looked for in library frames (`tree_map(print, grads)`): one identity test
    # per event, where a dict lookup would cost every event of JAX's own frames.
    print_builtin = print

    def profile_hook(frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call":
            role = roles_get(id(frame.f_code))
            if role is None:
                role = classify(frame)
            if role:
                on_call(frame, role)
        elif frame in watched_frames:
            on_watched_frame_event(frame, event, arg)
        elif arg is print_builtin and event == "c_call":
            on_library_builtin_call(frame, arg)

    if previous is None:
        return profile_hook

    def chained_profile_hook(frame: types.FrameType, event: str, arg: Any) -> None:
        previous(frame, event, arg)
        profile_hook(frame, event, arg)

    return chained_profile_hook


@contextlib.contextmanager
def watch_effects(
    target_code: types.CodeType | None,
    *,
    is_user_file: IsUserFile | None = None,
    backend: Backend = "auto",
) -> Iterator[EffectWatch]:
    """Record trace-time side effects while the ``with`` block runs (on this thread).

    ``target_code`` is the code object of the traced function's body: its runs are
    counted (``body_runs``) and its arguments and closure are watched for mutation.
    ``is_user_file`` decides which files are user code (default: not the stdlib,
    site-packages, JAX/NumPy or jitscope). ``backend`` picks the event source: "auto"
    uses ``sys.monitoring`` on Python 3.12+ (much cheaper) and a profile hook otherwise.

    With the profile hook, a Python-level profiler already installed keeps receiving
    every event and is restored on exit; a C-level one (pyinstrument, cProfile) cannot be
    chained from Python, so the watch then records nothing and says so in its notes.
    ``sys.monitoring`` needs no profile hook: a C-level profiler is left alone there too,
    and the notes say so, but effects are still watched.
    """
    watch = EffectWatch(target_code, is_user_file or default_is_user_file)
    try:
        if backend != "profile" and monitoring_available():
            with monitor_events(watch) as monitoring:
                if monitoring:
                    if _c_level_profiler_active():
                        watch.note(
                            "a C-level profiler (e.g. pyinstrument) was active: it was left alone, "
                            "and side effects were watched through sys.monitoring"
                        )
                    yield watch
                    return
        elif backend == "monitoring":
            watch.note("sys.monitoring needs Python 3.12+; the profile hook was used instead")
        with _profile_hook_installed(watch):
            yield watch
    finally:
        watch.finish()


def _c_level_profiler_active() -> bool:
    """A profiler installed from C (``PyEval_SetProfile``): ``sys.getprofile()`` is its state object."""
    current = sys.getprofile()
    return current is not None and not callable(current)


@contextlib.contextmanager
def _profile_hook_installed(watch: EffectWatch) -> Iterator[None]:
    previous = cast("ProfileHook | None", sys.getprofile())
    if _c_level_profiler_active():
        watch.note("side effects were not watched: a C-level profiler (e.g. pyinstrument) was active")
        yield
        return
    thread_id = threading.get_ident()
    hook = _make_profile_hook(watch, previous)
    # Inside JAX's own binds and nested jits the hook is off (jaxcompat/hook_gate.py): about half of what it
    # costs. Not with a profiler of the user's chained: that one sees every event, as without the watch.
    gate = hook_off_inside_jax(hook) if previous is None else contextlib.nullcontext()
    sys.setprofile(hook)
    try:
        with gate:
            yield
    finally:
        if threading.get_ident() == thread_id:
            current = sys.getprofile()
            if current is hook:
                sys.setprofile(previous)
            elif current is None:
                # Someone removed the hook (a profiler started and stopped inside the watch).
                sys.setprofile(previous)
                watch.note("the effect monitor was switched off during tracing; later effects were not seen")
            else:
                watch.note(
                    "another profiler replaced the effect monitor during tracing; it was left in place"
                )
            watch.frames.disable_line_tracing()
