"""The observer behind ``jitscope run``: turns JAX's cache misses into ``CompileEvent`` records.

``jaxcompat.compile_hooks`` calls it only when a call leaves JAX's C++ fast path, so a
cached call costs nothing. For each miss it keeps the function and arguments (a
handle, never stored in a record) until JAX reports the phases that follow (trace,
lower, compile); then the event is frozen into a record with its cache key compared
against every earlier key of the same function (``cachekeys.nearest``).

How phases are tied to calls, per thread (JAX traces, lowers and compiles a call on the
thread that made it):

* a miss made while JAX traces something else (depth > 1: an inner jit inside the outer
  function) belongs to the outer trace;
* JAX traces inside the miss (``_infer_params``), but lowers and compiles after it
  returned, and lowering can itself trace helpers (``random_fold_in``'s lowering rule jits
  ``_threefry_fold_in``): a miss made while a trace is in progress does not end the
  earlier, still open ones. Their lower and compile events find them by the name JAX
  gives (``jit(step)``), newest first;
* a miss made from plain Python (no trace in progress) means every earlier call on the
  thread has returned: those still open were traced without a compile of their own
  (``.trace()``/``.lower()``, an executable already in JAX's lower-level cache) and are
  finished as such;
* a lower or compile event that names a transformation of a known function
  (``jvp(step)``, ``transpose(jvp(step))``, from ``grad`` of a jitted function) is
  that function's, under JAX's name; only a name never seen stays "unattributed".
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import time
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from jitscope.model.common import Location
from jitscope.model.effects import EffectRecord
from jitscope.model.keys import KeyDiff
from jitscope.model.run import JAX_INTERNAL, LIBRARY, UNATTRIBUTED, USER, CompiledProgram, CompileEvent
from jitscope.run.collector import collector_paused
from jitscope.run.processes import ProcessWatch
from jitscope.tracing.cachekeys import Key, StaticValues, nearest
from jitscope.userframes import IsUserFile, default_is_user_file, display_path

_JITSCOPE_DIR = __file__.rsplit("/", 2)[0]


@dataclass(eq=False)  # compared by identity: its fields hold the user's arrays
class _Miss:
    """One call that left the fast path: live objects until the event is frozen."""

    fun: Any
    jit_info: Any
    args: Any
    kwargs: Any
    started: bool = False
    traced: bool = False
    compiled: bool = False
    trace_s: float = 0.0
    lower_s: float = 0.0
    compile_s: float = 0.0
    group: str = ""
    function: str = ""
    kind: str = USER
    defined_at: Location | None = None
    call_site: Location | None = None
    visit: int = 0  # eager ops: which run of the call-site line this was (CompileEvent.visit)
    user_fun: Any = None  # the user's function (behind pmap's or equinox's wrapper)
    via: str = ""
    key: Key = field(default_factory=dict)
    signature: str = ""
    effects: tuple[EffectRecord, ...] = ()
    error: str | None = None
    jax_name: str = ""  # as JAX's phase events name it
    call: Any = None  # the UserCall: the user's function and arguments (a handle)
    #: Made while an earlier miss on the thread was being lowered (a lowering rule tracing a helper):
    #: part of that lowering, never compiled on its own, so never the owner of an unnamed phase.
    nested: bool = False
    program: CompiledProgram | None = None  # what XLA built for it (multi-process runs only)


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.depth = 0
        self.tracing = False
        self.miss: _Miss | None = None  # the newest miss on this thread
        self.open: list[_Miss] = []  # older misses still waiting for their lowering or compile, oldest first
        self.program: CompiledProgram | None = None  # the executable just built, for the compile event to come
        #: The last eager op's user line and the frame the line called (kept alive, so a new call of the
        #: same function from that line, a later loop iteration, is never the same object).
        self.visit: tuple[Location, Any, int] | None = None


def jax_name(name: str | None) -> str | None:
    """``jit(f)`` (lowering and compile events), ``pmap(f)`` (JAX 0.6's pmap) and ``f`` (trace events) all name f."""
    if name is None:
        return None
    while name.startswith(("jit(", "pjit(", "pmap(")) and name.endswith(")"):
        name = name[name.index("(") + 1 : -1]
    return name


def base_name(name: str) -> str:
    """The function under JAX's transformation names: ``transpose(jvp(step))`` -> ``step``."""
    while name.endswith(")") and "(" in name and name[: name.index("(")].isidentifier():
        name = name[name.index("(") + 1 : -1]
    return name


def _fun_name(fun: Any) -> str | None:
    """The name JAX reports for ``fun`` (``api_util.fun_name``: a partial is named after its function)."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    name = getattr(fun, "__name__", None)
    return name if isinstance(name, str) else None


class RunObserver:
    """Collects ``CompileEvent`` records; ``on_event`` is called as each one is complete."""

    def __init__(self, *, effects: bool = True, effects_once: bool = False,
                 is_user_file: IsUserFile = default_is_user_file,
                 on_event: Callable[[CompileEvent], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter,
                 on_compile: Callable[[CompileEvent, Any], None] | None = None,
                 processes: ProcessWatch | None = None) -> None:
        self.effects = effects
        #: Watch each function's first trace only (``doctor``: a later trace runs the same Python, and the
        #: monitor's cost would inflate the recompiles whose seconds doctor ranks).
        self.effects_once = effects_once
        self._watched: set[str] = set()
        #: Which process of a multi-process program this is (``run/processes.py``); None: not asked.
        self.processes = processes
        self.on_event = on_event
        #: Told of each compile of the user's functions with the live ``UserCall`` (``run --capture``).
        self.on_compile = on_compile
        self.events: list[CompileEvent] = []
        self.notes: list[str] = []
        self._clock = clock
        self._start = clock()
        self._is_user_file = is_user_file
        self._user_files: dict[str, bool] = {}
        self._state = _ThreadState()
        self._lock = threading.RLock()
        self._keys: dict[str, list[tuple[int, Key]]] = {}
        self._statics = StaticValues()  # one for the run: equal static values read the same in every key
        self._objects: dict[str, list[Any]] = {}
        # JAX's name of each function seen -> (function, defined_at, kind, group), for transformations of it
        self._by_name: dict[str, tuple[str, Location | None, str, str]] = {}
        self._internal_errors = 0
        self._visits: dict[tuple[Location, Any], int] = defaultdict(int)  # calls per (user line, code called)

    # ------------------------------------------------------------ MissObserver

    def enter(self, fun: Callable[..., Any], jit_info: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        state = self._state
        state.depth += 1
        if state.depth == 1:
            previous, state.miss = state.miss, _Miss(fun, jit_info, args, kwargs)
            if previous is not None and not previous.compiled and previous.error is None:
                # May still be lowered and compiled: this call can be part of that. One not started yet had its
                # trace cached (first traced inside another trace: jax.random.normal's _normal inside an
                # eval_shape, then called eagerly) and goes straight to its lowering.
                state.open.append(previous)
            if state.open:
                if _top_level():
                    self._close_open(state)  # plain Python called: every earlier call on this thread has returned
                else:
                    state.miss.nested = True  # made while JAX traces inside an open call's lowering

    def exit(self) -> None:
        self._state.depth -= 1

    def resume(self) -> None:
        self._state.depth += 1

    @contextlib.contextmanager
    def tracing(self, fun: Callable[..., Any]) -> Iterator[object]:
        state = self._state
        miss = state.miss
        if state.depth != 1 or miss is None or state.tracing or miss.fun is not fun:
            yield None
            return
        self._guard(self._begin, miss)
        miss.traced = True
        state.tracing = True
        watch = self.effects and miss.kind == USER and not (self.effects_once and miss.group in self._watched)
        if watch and self.effects_once:
            self._watched.add(miss.group)
        watch_cm = (self._effect_watch(miss.user_fun if miss.user_fun is not None else fun)
                    if watch else contextlib.nullcontext())
        try:
            with watch_cm as watch:
                try:
                    yield None
                except BaseException as exc:
                    miss.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
                    raise
                finally:
                    state.tracing = False
            if watch is not None:
                with collector_paused():
                    miss.effects = watch.record().effects
        finally:
            if miss.error is not None:
                state.miss = None
                self._guard(self._finish, miss)

    def on_phase(self, phase: str, seconds: float, fun_name: str | None) -> None:
        state = self._state
        if state.depth > 1:
            return  # a phase of an inner jit while an outer one traces: part of the outer trace
        name = jax_name(fun_name)
        miss = self._owner(state, phase, name)
        if miss is None:
            miss = self._named_miss(name)
            if phase != "compile":
                if state.miss is not None:
                    state.open.append(state.miss)
                state.miss = miss
        if not miss.started:
            self._guard(self._begin, miss)
        if name is not None:
            miss.jax_name = name
        if phase == "trace":
            miss.trace_s += seconds
            return
        self._close_newer(state, miss)  # misses made while this one was lowered or compiled are done
        if phase == "lower":
            miss.lower_s += seconds
        elif phase == "compile":
            miss.compile_s += seconds
            miss.compiled = True
            miss.program, state.program = state.program, None
            if state.miss is miss:
                state.miss = None
            self._guard(self._finish, miss)

    def on_executable(self, executable: Any) -> None:
        """XLA built ``executable`` for the compile whose event comes next on this thread (multi-process runs:
        its program's fingerprint, to compare across processes)."""
        watch = self.processes
        if watch is None or (watch.check() is None and not watch.multi):
            return
        with collector_paused():
            from jitscope.run.programs import program_of

            self._state.program = program_of(executable)

    def _owner(self, state: _ThreadState, phase: str, name: str | None) -> _Miss | None:
        """The miss a phase event belongs to: the newest one JAX's name fits that still waits for this phase."""
        candidates = ([state.miss] if state.miss is not None else []) + state.open[::-1]
        for miss in candidates:
            if miss.compiled or (phase == "trace" and miss is not state.miss):
                continue
            if name is not None and _answers_to(miss, name):
                return miss
            if name is None and (phase == "trace" or not miss.nested):  # JAX < 0.5 names no phase
                return miss
        return None

    def _named_miss(self, name: str | None) -> _Miss:
        """A phase of no call seen: JAX's name for it, tied to the function it transforms when that is known."""
        known = self._by_name.get(base_name(name)) if name else None
        if known is None:
            return _Miss(None, None, None, None, function=name or "?", kind=UNATTRIBUTED, group=f"?{name}")
        function, defined_at, kind, group = known
        return _Miss(None, None, None, None, function=name or function, kind=kind, defined_at=defined_at,
                     group=f"{group}|{name}", via="jax transformation")

    def _close_newer(self, state: _ThreadState, miss: _Miss) -> None:
        """Finish the misses newer than ``miss`` on this thread: made while it was lowered, they are done."""
        if state.miss is miss or not any(m is miss for m in state.open):
            return
        index = next(i for i, m in enumerate(state.open) if m is miss)
        newer = state.open[index + 1:] + ([state.miss] if state.miss is not None else [])
        state.open, state.miss = state.open[:index], miss
        for done in newer:
            self._guard(self._finish, done)

    def _close_open(self, state: _ThreadState) -> None:
        closing, state.open = state.open, []
        for miss in closing:
            self._guard(self._finish, miss)

    # ------------------------------------------------------------ results

    def finish(self) -> list[CompileEvent]:
        """Freeze what is still pending on this thread (a trace without a compile) and return every event."""
        state = self._state
        miss, state.miss = state.miss, None
        if miss is not None:
            state.open.append(miss)
        self._close_open(state)
        state.visit = None  # the frame it keeps alive
        if self._internal_errors:
            self.notes.append(f"jitscope's observer hit {self._internal_errors} internal error(s); "
                              "some events may lack causes (JITSCOPE_DEBUG=1 raises them)")
        return list(self.events)

    def elapsed(self) -> float:
        return self._clock() - self._start

    # ------------------------------------------------------------ internals

    def _guard(self, method: Callable[[_Miss], None], miss: _Miss) -> None:
        """The observer runs inside JAX's dispatch: it must never raise into the user's program."""
        try:
            with collector_paused():
                method(miss)
        except Exception:
            import os

            if os.environ.get("JITSCOPE_DEBUG"):
                raise
            self._internal_errors += 1

    def _effect_watch(self, fun: Any) -> contextlib.AbstractContextManager[Any]:
        with collector_paused():  # the effect monitor's import: some 4,000 objects
            from jitscope.effects.monitor import watch_effects
            from jitscope.run.keys import unwrap_function

            code = getattr(unwrap_function(fun), "__code__", None)
            return watch_effects(code, is_user_file=self._is_user_file)

    def is_user(self, filename: str) -> bool:
        """Whether ``filename`` is the user's code (not a library's, not jitscope's); cached per file."""
        known = self._user_files.get(filename)
        if known is None:
            known = self._user_files[filename] = (self._is_user_file(filename)
                                                  and not filename.startswith(_JITSCOPE_DIR))
        return known

    def _begin(self, miss: _Miss) -> None:
        """First phase of a miss: name it, find the user's call site and build its cache key."""
        miss.started = True
        miss.call_site, called_from_user, callee = self._call_site()
        if miss.fun is None:
            return
        from jitscope.jaxcompat.compile_hooks import context_components, x64_enabled
        from jitscope.run.keys import closure_text, live_key, unwrap_function
        from jitscope.run.wrappers import user_call

        call = user_call(miss.fun, miss.jit_info, tuple(miss.args), dict(miss.kwargs))
        miss.user_fun, miss.via, miss.call = call.fun, call.via, call
        inner = unwrap_function(call.fun)
        code = getattr(inner, "__code__", None)
        miss.function = getattr(inner, "__qualname__", None) or getattr(call.fun, "__name__", None) or repr(inner)
        if code is not None:
            miss.defined_at = Location(display_path(code.co_filename), code.co_firstlineno, miss.function)
            miss.group = f"{code.co_filename}:{code.co_firstlineno}:{miss.function}"
            if not self.is_user(code.co_filename):
                # a library's function counts as the user's when the user's code called it through jit
                miss.kind = (JAX_INTERNAL if "/jax/" in code.co_filename
                             else USER if called_from_user else LIBRARY)
        else:
            miss.group = f"{type(inner).__qualname__}:{miss.function}"
        if miss.kind == JAX_INTERNAL:
            # eager op-by-op execution: JAX jits each primitive; name it after the primitive
            miss.function = getattr(miss.fun, "__name__", miss.function)
            miss.group = f"jax:{miss.function}"
            miss.visit = self._visit(miss.call_site, callee)
        jax_fun_name = _fun_name(miss.fun)
        if jax_fun_name is not None and miss.kind != JAX_INTERNAL:
            self._by_name[jax_fun_name] = (miss.function, miss.defined_at, miss.kind, miss.group)
        x64 = x64_enabled()
        key, miss.signature = live_key(call, x64=x64, statics=self._statics)
        if miss.kind != JAX_INTERNAL:  # JAX builds a new function per eager op; its closure says enough
            # pmap builds a new internal function per argument structure: the user's function is the object
            key["function: object"] = self._object_label(miss.group, call.fun if call.via else miss.fun)
        key["function: closure"] = closure_text(call.fun, x64)
        key.update(context_components(x64))
        miss.key = key

    def _object_label(self, group: str, fun: Any) -> str:
        """"#n": which distinct function object of this code this is (a new one per loop iteration: jit in a loop)."""
        anchor = getattr(fun, "__self__", None) if hasattr(fun, "__func__") else fun
        known = self._objects.setdefault(group, [])
        for index, ref in enumerate(known, start=1):
            obj = ref() if isinstance(ref, weakref.ref) else ref
            if obj is anchor:
                return f"#{index}"
        try:
            known.append(weakref.ref(anchor))
        except TypeError:
            known.append(anchor)
        return f"#{len(known)}"

    def _call_site(self) -> tuple[Location | None, bool, Any]:
        """The first frame in the user's code, whether the jit call came from it (not from a library), and the
        frame that line called."""
        frame, callee = sys._getframe(2), None
        outside_jax: bool | None = None  # the first frame outside JAX and jitscope: is it the user's?
        while frame is not None:
            filename = frame.f_code.co_filename
            user = self.is_user(filename)
            if outside_jax is None and (user or not _in_jax(filename)):
                outside_jax = user
            if user:
                where = Location(display_path(filename), frame.f_lineno, frame.f_code.co_name)
                return where, bool(outside_jax), callee
            frame, callee = frame.f_back, frame  # type: ignore[assignment]
        return None, False, None

    def _visit(self, where: Location | None, callee: Any) -> int:
        """Which call from the user's line ``where`` of the function it called (``callee``) an eager op comes
        from: the same number as the last eager op's while that call is still running (a model's init
        compiling op after op), the next number once the line calls the function anew (the next time round a
        loop). Two functions called from one line are numbered apart: each one's first call is 1."""
        if where is None or callee is None:
            return 0
        state = self._state
        if state.visit is not None and state.visit[0] == where and state.visit[1] is callee:
            return state.visit[2]
        with self._lock:
            self._visits[(where, callee.f_code)] += 1
            number = self._visits[(where, callee.f_code)]
        state.visit = (where, callee, number)
        return number

    def _finish(self, miss: _Miss) -> None:
        if not miss.started:
            return
        with self._lock:
            earlier = self._keys.setdefault(miss.group, [])
            number = len(earlier) + 1
            same = next((label for label, key in earlier if key == miss.key), 0) if miss.key else 0
            near = None if same or not miss.key else nearest(earlier, miss.key)
            causes: tuple[KeyDiff, ...] = near.diffs if near is not None else ()
            earlier.append((number, miss.key))
            process = self.processes.check() if self.processes is not None else None
            event = CompileEvent(
                index=len(self.events) + 1, function=miss.function, defined_at=miss.defined_at,
                call_site=miss.call_site, visit=miss.visit, number=number, kind=miss.kind, signature=miss.signature,
                at_s=round(self.elapsed(), 6), traced=miss.traced, compiled=miss.compiled,
                trace_s=miss.trace_s, lower_s=miss.lower_s, compile_s=miss.compile_s,
                nearest=near.labels if near is not None else ((same,) if same else ()), causes=causes,
                same_key_as=same, effects=miss.effects, error=miss.error, via=miss.via,
                jax_name=miss.jax_name or (_fun_name(miss.fun) or "" if miss.fun is not None else miss.function),
                process=process.index if process is not None else None,
                program=miss.program,
            )
            self.events.append(event)
        if self.on_compile is not None and event.compiled and event.kind == USER and miss.call is not None:
            self.on_compile(event, miss.call)
        miss.fun = miss.args = miss.kwargs = miss.jit_info = miss.user_fun = miss.call = None  # drop them now
        if self.on_event is not None:
            self.on_event(event)


def _in_jax(filename: str) -> bool:
    return filename.startswith(_JITSCOPE_DIR) or any(part in filename for part in _JAX_DIRS)


_JAX_DIRS = ("/jax/", "/jaxlib/", "\\jax\\", "<frozen ", "/contextlib.py", "/functools.py")


def _answers_to(miss: _Miss, name: str) -> bool:
    """Whether JAX's name (``jit(...)`` removed) can be this miss's function."""
    if miss.fun is None:
        return miss.function == name
    own = _fun_name(miss.fun)
    return own is None or jax_name(own) == name


def _top_level() -> bool:
    from jitscope.jaxcompat.compile_hooks import top_level

    return top_level()
