"""``--from-run``: run the user's program up to the N-th call of one function and take that call's arguments.

The program runs as ``jitscope run`` runs it (``run_program``: ``__main__``, ``sys.argv``,
``sys.path[0]``). A cached call of a jitted function never reaches Python, so the call cannot
be seen from JAX's side; it is seen from the caller's: the name the function is bound to in
the program's module (``train_step``, or ``Trainer.step`` for a method) is replaced by a
``CallTrap`` that counts calls and hands them on unchanged. The binding is made while the
module runs (a script defines ``train_step`` and calls it a few lines later), so the module's
own frame is watched line by line, and only it: on Python 3.12+ through ``sys.monitoring`` LINE
events on that one code object (no other code pays anything); on 3.11 through ``sys.settrace``,
whose global hook gives no local tracer to any other frame but is still called at every Python
call of the program (``benchmarks/from_run_overhead.py`` measures it). Either is removed as soon
as the call is taken. A rebinding
(``train_step = jax.jit(train_step)``) is trapped again on the next line, and a call made while
JAX traces (the trap wrapped in the program's own ``jit``) is handed on uncounted.

The call's arguments are the objects the program passed, at the level it passed them:
a flax ``nnx`` model and optimizer, a ``TrainState``, an equinox module, arrays. Then the
program is stopped by an exception raised at the call (its ``finally`` blocks and context
managers run), or, with ``keep_running``, it goes on; the arguments that call donates are
copied first so they stay usable. Handles only: nothing here is a record.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import types
from dataclasses import dataclass, field
from typing import Any

from jitscope.errors import UsageError, UserCodeError
from jitscope.run.program import Outcome, Program, ProgramStopped, run_program


@dataclass
class CapturedCall:
    """The N-th call of the target, as the program made it (live objects: a handle)."""

    fn: Any  # the object the program called: a jax.jit / nnx.jit / filter_jit wrapper, or a function
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    number: int
    seconds: float  # from the program's start to the call


@dataclass
class CaptureResult:
    call: CapturedCall | None
    outcome: Outcome
    calls_seen: int
    wall_s: float
    bound: bool = False  # whether the program ever bound the name
    wrapped_by: tuple[str, ...] = ()  # module-level names of the program's own wrappers of it (f = jax.jit(step))


class _Taken(ProgramStopped):
    """Raised at the captured call to stop the program there."""


@dataclass(eq=False)  # hashed by identity, as the function it stands in for (jax.jit(step) hashes it)
class CallTrap:
    """Stands in for the program's function: counts calls outside traces, takes the wanted one."""

    wrapped: Any
    owner: _Capture = field(repr=False)
    bound_self: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.bound_self is not None:
            args = (self.bound_self, *args)
        owner = self.owner
        if owner.call is None and _top_level():
            owner.seen += 1
            if owner.seen == owner.wanted:
                owner.take(self.wrapped, args, kwargs)
                if not owner.keep_running:
                    raise _Taken
        return self.wrapped(*args, **kwargs)

    def __get__(self, instance: Any, owner_type: Any = None) -> Any:
        if instance is None:
            return self
        return CallTrap(self.wrapped, self.owner, instance)

    def __getattr__(self, name: str) -> Any:  # .lower, .trace, ._cache_size, __wrapped__ ...
        return getattr(self.wrapped, name)


class _Capture:
    def __init__(self, filename: str, attr_path: str, wanted: int, keep_running: bool) -> None:
        self.filename = filename
        self.parts = attr_path.split(".")
        self.wanted = wanted
        self.keep_running = keep_running
        self.seen = 0
        self.bound = False
        self.call: CapturedCall | None = None
        self.start = time.perf_counter()
        self._frames: list[types.FrameType] = []
        self._tool: int | None = None  # the sys.monitoring tool id, when that is what watches
        self._codes: list[types.CodeType] = []
        self.namespace: dict[str, Any] | None = None  # the module's globals, once the name is bound there

    def wrappers(self) -> tuple[str, ...]:
        """The module-level names bound to a wrapper of the trap (``f = jax.jit(step)``): their cached
        calls never reach the trap, so the program's calls of ``step`` cannot be counted through it."""
        names = []
        for name, value in list((self.namespace or {}).items()):
            try:
                inner = getattr(value, "__wrapped__", None)
            except Exception:  # noqa: BLE001, S112 - an arbitrary object of the user's
                continue
            if isinstance(inner, CallTrap) and inner.owner is self:
                names.append(name)
        return tuple(names)

    # -- the line tracer: the program's module frame only
    def global_hook(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        if event == "call" and code.co_name == "<module>" and os.path.abspath(code.co_filename) == self.filename:
            self._frames.append(frame)
            return self.line_hook
        return None

    def line_hook(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event in ("line", "return") and self.call is None:
            self.trap(frame.f_globals)
        return self.line_hook

    def trap(self, namespace: dict[str, Any]) -> None:
        head, *rest = self.parts
        if head not in namespace:
            return
        parent: Any = None
        obj = namespace[head]
        for part in rest:
            parent, obj = obj, getattr(obj, part, None)
            if obj is None:
                return
        if isinstance(obj, CallTrap) or (parent is not None and isinstance(vars(parent).get(rest[-1]), CallTrap)):
            return
        self.bound = True
        self.namespace = namespace
        trap = CallTrap(obj, self)
        if parent is None:
            namespace[head] = trap
        else:
            try:
                setattr(parent, rest[-1], trap)
            except (AttributeError, TypeError):
                return  # a frozen or C-level owner: its calls cannot be seen

    def take(self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self.keep_running:
            args, kwargs = _copy_donated(fn, args, kwargs)
        self.call = CapturedCall(fn, args, kwargs, self.seen, time.perf_counter() - self.start)
        self.stop_tracing()

    # -- sys.monitoring (3.12+): PY_START until the module's code starts, then LINE events on it alone
    def start_monitoring(self) -> bool:
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None:
            return False
        for tool in (3, 4, 5):
            try:
                monitoring.use_tool_id(tool, "jitscope-from-run")
            except ValueError:
                continue
            self._tool = tool
            events = monitoring.events
            monitoring.register_callback(tool, events.PY_START, self._on_start)
            monitoring.register_callback(tool, events.LINE, self._on_line)
            monitoring.set_events(tool, events.PY_START)
            return True
        return False

    def _on_start(self, code: types.CodeType, offset: int) -> Any:
        monitoring = sys.monitoring  # type: ignore[attr-defined]  # 3.12+
        if code.co_name == "<module>" and os.path.abspath(code.co_filename) == self.filename:
            monitoring.set_events(self._tool, 0)
            monitoring.set_local_events(self._tool, code, monitoring.events.LINE)
            self._codes.append(code)
            return None
        return monitoring.DISABLE

    def _on_line(self, code: types.CodeType, line: int) -> Any:
        if self.call is None:
            self.trap(sys._getframe(1).f_globals)
        return None

    def stop_tracing(self) -> None:
        if self._tool is not None:
            monitoring = sys.monitoring  # type: ignore[attr-defined]  # 3.12+
            for code in self._codes:
                monitoring.set_local_events(self._tool, code, 0)
            monitoring.set_events(self._tool, 0)
            monitoring.register_callback(self._tool, monitoring.events.PY_START, None)
            monitoring.register_callback(self._tool, monitoring.events.LINE, None)
            monitoring.free_tool_id(self._tool)
            monitoring.restart_events()  # the code objects DISABLEd above would stay off for the next user of the id
            self._tool = None
            self._codes.clear()
            return
        sys.settrace(None)
        for frame in self._frames:
            frame.f_trace = None
        self._frames.clear()


def capture_call(program: Program, target_file: str, attr_path: str, *, call: int = 1,
                 keep_running: bool = False) -> CaptureResult:
    """Run ``program`` until the ``call``-th call of ``attr_path`` bound in ``target_file``'s module."""
    capture = _Capture(os.path.abspath(target_file), attr_path, call, keep_running)
    previous, before = sys.gettrace(), set(threading.enumerate())
    if not capture.start_monitoring():
        sys.settrace(capture.global_hook)
    try:
        outcome = run_program(program)
    finally:
        monitored = capture._tool is not None
        capture.stop_tracing()
        if not monitored:
            sys.settrace(previous)
    _LEFT_RUNNING.extend(t for t in threading.enumerate() if t not in before and not t.daemon and t.is_alive())
    return CaptureResult(capture.call, outcome, capture.seen, time.perf_counter() - capture.start, capture.bound,
                         capture.wrappers() if capture.call is None else ())


#: Threads the stopped program started and left running (a data loader blocked on a full queue): the
#: interpreter would wait for them at exit, forever. Process state, as the threads are.
_LEFT_RUNNING: list[threading.Thread] = []


def exit_now_if_program_threads_left(code: int) -> None:
    """End the process with ``code`` at once when a stopped program left threads running (see above)."""
    if any(t.is_alive() for t in _LEFT_RUNNING):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def require_call(result: CaptureResult, target: str, wanted: int) -> CapturedCall:
    """The captured call, or one clear line saying why there is none (exit 1)."""
    if result.call is not None:
        return result.call
    how = result.outcome.description
    if result.wrapped_by:
        module, _, name = target.rpartition(":")
        wrapper = result.wrapped_by[0]
        raise UserCodeError(f"{target} was called {_times(result.calls_seen)} before the program {how}: the program "
                            f"calls it through its own wrapper `{wrapper}` (a jit of it), whose cached calls never "
                            f"reach {name}", hint=f"name the wrapper instead: {module}:{wrapper}")
    if result.calls_seen:
        raise UserCodeError(f"{target} was called {_times(result.calls_seen)} before the program {how}; --call {wanted} asks for "
                            f"call {wanted}", hint=f"pass --call {result.calls_seen} or less")
    if result.outcome.exit_code != 0 and not result.outcome.description.startswith("exited 0"):
        raise UserCodeError(f"the program {how} (exit {result.outcome.exit_code}) before it called {target}",
                            hint="its traceback is above; fix it or pick a function it calls earlier")
    if not result.bound:
        raise UserCodeError(f"the program {how} without defining {target.rsplit(':', 1)[-1]} in its module",
                            hint="name the function as the script binds it (module-level name or Class.method)")
    raise UserCodeError(f"{target} was never called: the program {how} (exit {result.outcome.exit_code})",
                        hint="check that this run of the program reaches the call (its arguments after --)")


def _times(n: int) -> str:
    return "never" if n == 0 else "once" if n == 1 else f"{n} times"


def check_target_program(target_file: str, program: Program) -> None:
    if program.path is not None and os.path.abspath(program.path) != os.path.abspath(target_file):
        raise UsageError("--from-run runs the target's own script", hint=f"use {program.path}:FUNCTION as the target")


def _top_level() -> bool:
    if "jax" not in sys.modules:
        return True
    from jitscope.jaxcompat.compile_hooks import top_level

    return top_level()


def _copy_donated(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments with every array the call may donate copied, so the real call cannot delete them.

    Which arguments a jit donates is read from its options where jitscope can see them; where it
    cannot (a library's wrapper), every array is copied.
    """
    import jax

    from jitscope.jaxcompat.jit import unwrap_jit

    unwrapped = unwrap_jit(fn)
    donated: set[int | str] | None = None
    if unwrapped is not None:
        options = unwrapped[1]
        donated = set(options.donate_argnums)

    def copy(tree: Any) -> Any:
        return jax.tree_util.tree_map(lambda x: x.copy() if isinstance(x, jax.Array) else x, tree)

    if donated is not None and not donated:
        return args, kwargs
    new_args = tuple(copy(a) if donated is None or i in donated else a for i, a in enumerate(args))
    new_kwargs = {k: copy(v) if donated is None or k in donated else v for k, v in kwargs.items()}
    return new_args, new_kwargs
