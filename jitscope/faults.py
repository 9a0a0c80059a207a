"""The user's code exits, crashes or tampers with the process: the user's failure, said in one line (issue 25).

jitscope runs the user's code in its own process (importing the module, tracing the function,
calling it to time it). What that code may do to the process, and what jitscope makes of it:

* ``sys.exit(n)`` / ``raise SystemExit``: ``exits_as_errors`` turns it into ``UserExit``, an
  ordinary exception, wherever jitscope calls the user's function, so the call fails like any
  other (exit 1, an ``error:`` line naming where it exited, a JSON report still written);
* ``os._exit(n)``, a fatal signal (a segfault in a C extension) or an abort: nothing can resume
  after them, so ``guard_process`` makes the last lines say what happened: ``os._exit`` prints one
  line naming the call and the user's frame before it exits, and ``faulthandler`` prints the
  signal and the Python stack (the user's frame in it) on a crash;
* closing or replacing ``sys.stdout``/``sys.stderr``, closing file descriptor 1 or 2, emptying
  ``sys.path`` or replacing ``jax.jit``: ``protected_state`` restores jitscope's own state when
  the user's code returns and reports what was changed as a user error, so the report is still
  written where it belongs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from jitscope.errors import UserCodeError

#: os._exit as Python made it (``guard_process`` replaces the module attribute while user code runs).
_REAL_EXIT = os._exit


class UserExit(Exception):
    """The user's code raised SystemExit where jitscope called it."""

    def __init__(self, exit_: SystemExit) -> None:
        code = exit_.code
        super().__init__(f"the code called sys.exit({code!r})" if code is not None else "the code called sys.exit()")
        self.code = code


def exits_as_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, with a SystemExit it raises turned into ``UserExit`` (its traceback kept).

    A child process the function forked (``os.fork``) ends when the function returns or raises in it, with
    the exit code it gave (0 on return, 1 on an exception): it must not go on to run jitscope's command and
    print a second report (issue 30).
    """
    parent = os.getpid()

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            result = fn(*args, **kwargs)
        except SystemExit as exc:
            if os.getpid() != parent:
                _end_forked_child(exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1)
            raise UserExit(exc).with_traceback(exc.__traceback__) from None
        except BaseException:
            if os.getpid() != parent:
                _end_forked_child(1)
            raise
        if os.getpid() != parent:
            _end_forked_child(0)
        return result

    return call


def _end_forked_child(code: int) -> NoReturn:
    """End a child the user's code forked, its output flushed, without running jitscope's command on in it."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    _REAL_EXIT(code)


def _user_frame_text(frame: Any) -> str:
    from jitscope.userframes import default_is_user_file

    while frame is not None:
        if default_is_user_file(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return "(no frame of yours on the stack)"


@contextlib.contextmanager
def guard_process() -> Iterator[None]:
    """While the block runs: ``os._exit`` says where it was called, and a crash prints the signal and stack."""
    import faulthandler

    real_exit = os._exit
    was_enabled = faulthandler.is_enabled()

    def reported_exit(status: int) -> NoReturn:
        code, where = status, _user_frame_text(sys._getframe(1))
        try:
            sys.stderr.flush()
            os.write(2, f"error: os._exit({code}) called at {where}: the process ends here, without "
                        "jitscope's report\n".encode())
        except (OSError, ValueError):
            pass
        real_exit(code)

    os._exit = reported_exit
    if not was_enabled:
        with contextlib.suppress(Exception):  # no usable stderr: nothing to print a crash to anyway
            faulthandler.enable(all_threads=False)
    try:
        yield
    finally:
        os._exit = real_exit
        if not was_enabled:
            faulthandler.disable()


@contextlib.contextmanager
def protected_state() -> Iterator[list[str]]:
    """Restore stdout/stderr (objects and descriptors), ``sys.path`` and ``jax.jit`` after the block.

    Yields a list the block's tampering is described in; on leaving, a non-empty list is raised as one
    ``UserCodeError`` (exit 1) after everything was put back.
    """
    saved_streams = (sys.stdout, sys.stderr)
    saved_path = list(sys.path)
    saved_fds = {fd: _dup(fd) for fd in (1, 2)}
    import jax  # the commands that run the user's code use it anyway; imported here to know jax.jit as it was

    saved_jit = jax.jit
    changes: list[str] = []
    try:
        yield changes
    finally:
        for fd, copy in saved_fds.items():
            if copy is None:
                continue
            if not fd_open(fd):
                os.dup2(copy, fd)
                changes.append(f"closed file descriptor {fd}")
            os.close(copy)
        for fd, name, stream in zip((1, 2), ("stdout", "stderr"), saved_streams, strict=True):
            current = getattr(sys, name)
            if current is not stream:
                changes.append(f"replaced sys.{name}")
            if getattr(stream, "closed", False):
                stream = text_stream(fd, stream)
                changes.append(f"closed sys.{name}")
            setattr(sys, name, stream)
        if sys.path != saved_path:
            if not sys.path or not set(saved_path) <= set(sys.path):
                changes.append("removed entries from sys.path")
            sys.path[:] = saved_path
        if jax.jit is not saved_jit:
            jax.jit = saved_jit
            changes.append("replaced jax.jit")
    if changes:
        raise UserCodeError(f"your code {', '.join(dict.fromkeys(changes))} while jitscope ran it",
                            hint="jitscope put it back; code that is traced or timed should leave the process as "
                            "it found it")


def text_stream(fd: int, like: Any) -> Any:
    """A new text stream on ``fd``, encoded as ``like`` (a closed ``sys.stdout``/``sys.stderr``) was; closing
    it leaves ``fd`` open."""
    import io

    return io.TextIOWrapper(open(fd, "wb", closefd=False), encoding=getattr(like, "encoding", None) or "utf-8",
                            errors=getattr(like, "errors", None) or "strict", line_buffering=True)


def writable_stderr() -> None:
    """After ``jitscope run``'s program: a ``sys.stderr`` jitscope can write its summary to, whatever the program
    did to it. A closed (or removed) ``sys.stderr`` gets a new stream on fd 2; a closed fd 2 is pointed at
    ``os.devnull``, so the summary goes nowhere, as the program's own stderr output would under python, and the
    report file and the exit code are what they would be had it stayed open."""
    if not fd_open(2):
        devnull_on(2)
    if sys.stderr is None or getattr(sys.stderr, "closed", False):
        sys.stderr = text_stream(2, sys.stderr or sys.__stderr__)


@contextlib.contextmanager
def user_code_scope() -> Iterator[None]:
    """Around a command's calls into the user's code: ``guard_process`` and ``protected_state``."""
    with guard_process(), protected_state():
        yield


def _dup(fd: int) -> int | None:
    try:
        return os.dup(fd)
    except OSError:
        return None


def devnull_on(fd: int) -> None:
    """``os.devnull`` (for writing) on the descriptor ``fd``, inherited by child processes as fd 1 and 2 are."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    if devnull == fd:  # the lowest free descriptor: os.open made it non-inheritable, unlike dup2
        os.set_inheritable(fd, True)
        return
    os.dup2(devnull, fd)
    os.close(devnull)


def fd_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


#: Set when Ctrl-C arrived (``exit_soon_after_interrupt``): a command that ends anyway (the interrupt
#: lost in a callback) still exits 130 (``cli.app.main``).
INTERRUPTED = threading.Event()

#: Seconds jitscope waits, after Ctrl-C, for the command to unwind before it ends the process itself.
INTERRUPT_GRACE_S = 1.0


def end_interrupted() -> NoReturn:
    """Ctrl-C's end of every command: one line, exit 130, without Python's finalization.

    Finalizing while XLA compiles or profiles on other threads can crash (a segfault seen here), and
    a KeyboardInterrupt raised again in an exit handler would end the process by SIGINT: outputs are
    already whole or absent (``outputs.py``), so there is nothing left to finish.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    children = sys.modules.get("jitscope.children")
    if children is not None:
        children.kill_all()  # a diff side, a --processes process: nothing of jitscope's outlives it
    with contextlib.suppress(Exception):
        from jitscope.outputs import remove_scratch

        remove_scratch()  # a profile capture's or a folder's scratch files: nothing left behind in /tmp
    with contextlib.suppress(OSError):
        if os.isatty(2):
            os.write(2, b"\x1b[?25h")  # a progress bar may have hidden the cursor
        os.write(2, b"interrupted\n")
    _REAL_EXIT(130)


def _importing(frame: Any) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _redeliver_lost_interrupt(previous: Any) -> Any:
    """An unraisable hook: a KeyboardInterrupt lost in a callback is not printed but raised again.

    Python cannot propagate an exception out of a garbage-collection callback (JAX's
    ``_xla_gc_callback``), a ``__del__`` or a weakref callback: it prints 'Exception ignored in ...'
    with a traceback and goes on. Ctrl-C lost there is delivered again to the main thread a moment
    later, from another thread (a signal sent at once would run the handler inside this hook, where
    it is lost again; a real signal, unlike ``_thread.interrupt_main``, also ends a blocking sleep or
    wait), so the command unwinds as usual; anything else goes to the previous hook.
    """
    import signal

    main = threading.main_thread().ident
    assert main is not None

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and INTERRUPTED.is_set():
            timer = threading.Timer(0.01, signal.pthread_kill, (main, signal.SIGINT))
            timer.daemon = True
            timer.start()
            return
        previous(unraisable)

    return hook


def exit_soon_after_interrupt(grace: float = INTERRUPT_GRACE_S) -> None:
    """Make Ctrl-C end the process within about ``grace`` seconds, exit 130, whatever the main thread does.

    Python runs its SIGINT handler only between bytecodes of the main thread, so while XLA compiles
    or a profile capture runs in C, Ctrl-C waits; and a KeyboardInterrupt raised inside a callback
    (JAX's garbage-collection callback) can be printed as 'Exception ignored' and lost. The C-level
    handler still writes the signal to ``signal.set_wakeup_fd`` at once: a daemon thread waiting on
    it gives the main thread ``grace`` seconds to unwind as usual (its KeyboardInterrupt, the
    'interrupted' line, exit 130), then shows the cursor again and ends the process with exit 130.
    Not for ``jitscope run``: there Ctrl-C is the user's program's to handle.
    """
    import signal

    if threading.current_thread() is not threading.main_thread():
        return
    def on_interrupt(signum: int, frame: Any) -> None:
        INTERRUPTED.set()  # before the KeyboardInterrupt, which a callback may swallow
        if _importing(frame):
            return  # raised inside a native module's import (jaxlib's MLIR), it aborts the process: the
            # watchdog below ends it with 130 instead
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    sys.unraisablehook = _redeliver_lost_interrupt(sys.unraisablehook)
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(read_fd)
        os.close(write_fd)
        return

    def watch() -> None:
        while True:
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data:
                break
        INTERRUPTED.set()
        import time

        time.sleep(grace)
        end_interrupted()

    threading.Thread(target=watch, name="jitscope-interrupt", daemon=True).start()
