"""SIGTERM while ``jitscope run``'s program runs: the program ends, and its report is still written (issue 30).

Python's default for SIGTERM ends the process at once, before jitscope can write the report. While
the program runs, a handler raises ``Terminated`` in it instead, which ``run_program`` turns into exit
143 (as a shell reports a process that SIGTERM killed), and the report is written as for any exit.

A Python handler runs only when the main thread is back in Python bytecode: a program stuck in C (a
collective that never completes) would then outlive the SIGTERM its launcher sends before SIGKILL.
So a watchdog thread, woken through ``signal.set_wakeup_fd`` as Ctrl-C's is in the other commands
(``faults.exit_soon_after_interrupt``), gives the main thread ``GRACE_S`` seconds to take the signal,
then ends the process with exit 143 and one line saying so (what a multi-process run checkpointed is
left, as before). A C loop that never releases the GIL stops the watchdog too: only SIGKILL ends it.

What the program does with signals stays its own: a SIGTERM handler it installs replaces jitscope's
(and the watchdog then ignores SIGTERM), a wakeup fd it set is left alone (and there is no watchdog),
and a child it forks (``os.fork``, ``multiprocessing``) gets Python's default back: SIGTERM ends the
child at once. The fork hooks below make that race-free: the forking thread blocks SIGTERM and the
wakeup fd is unset across the fork, so the child is born with no wakeup fd to share with the parent
(a SIGTERM sent to the child can never wake the parent's watchdog), and a SIGTERM that reaches it
before its default is back stays pending until then, and ends it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

#: The exit code of a program ended by SIGTERM (128 + 15, as a shell reports it).
EXIT_TERMINATED = 128 + signal.SIGTERM
#: Seconds the main thread has to take SIGTERM before the watchdog ends the process.
GRACE_S = 2.0


class Terminated(BaseException):
    """SIGTERM arrived while the program ran (and it has no handler of its own): it ends the program."""


class _Handler:
    """jitscope's SIGTERM handler while the program runs, and the wakeup fd its watchdog reads (-1: none)."""

    def __init__(self) -> None:
        self.taken = threading.Event()
        self.wakeup_fd = -1

    def __call__(self, signum: int, frame: Any) -> None:
        self.taken.set()
        raise Terminated


@contextlib.contextmanager
def sigterm_ends_the_program(grace: float = GRACE_S) -> Iterator[None]:
    """While the block runs, SIGTERM raises ``Terminated`` in the main thread (see the module docstring)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    handler = _Handler()
    signal.signal(signal.SIGTERM, handler)
    stop_watching = _watch(handler, grace)
    _ACTIVE.append(handler)
    try:
        yield
    finally:
        if handler in _ACTIVE:  # not in a forked child unwinding through here: the fork hook took it out
            _ACTIVE.remove(handler)
        stop_watching()
        if signal.getsignal(signal.SIGTERM) is handler:  # a handler the program installed stays
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _watch(handler: _Handler, grace: float) -> Any:
    """Start the watchdog; returns what stops it (nothing to stop when a wakeup fd was set already)."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except (ValueError, OSError):
        previous = None
    if previous != -1:  # the program's own (or none could be set): leave it alone, no watchdog
        if previous is not None:
            signal.set_wakeup_fd(previous)
        os.close(read_fd)
        os.close(write_fd)
        return lambda: None
    handler.wakeup_fd = write_fd
    stopped = threading.Event()

    def ours() -> bool:  # the program may have installed its own handler since: then SIGTERM is its business
        return signal.getsignal(signal.SIGTERM) is handler and not stopped.is_set()

    def watch() -> None:
        try:
            while not stopped.is_set():
                data = os.read(read_fd, 64)
                if not data:
                    return
                if signal.SIGTERM in data and ours() and not handler.taken.wait(grace) and ours():
                    with contextlib.suppress(OSError):
                        os.write(2, b"jitscope run: the program did not stop within "
                                    b"%.0f s of SIGTERM (it is stuck outside Python): ended without the report\n"
                                    % grace)
                    os._exit(EXIT_TERMINATED)
        except OSError:
            return
        finally:
            os.close(read_fd)

    threading.Thread(target=watch, name="jitscope-sigterm", daemon=True).start()

    def stop() -> None:
        stopped.set()
        handler.wakeup_fd = -1
        with contextlib.suppress(ValueError, OSError):
            current = signal.set_wakeup_fd(-1)
            if current != write_fd:  # the program set its own since: put it back
                signal.set_wakeup_fd(current)
        with contextlib.suppress(OSError):
            os.write(write_fd, b"\0")  # wakes the watchdog, which then ends
        os.close(write_fd)

    return stop


#: The handler in force while a program runs (at most one): what the fork hooks act on.
_ACTIVE: list[_Handler] = []


def _before_fork() -> None:
    """In the parent, just before ``os.fork``: SIGTERM blocked in the forking thread, no wakeup fd."""
    if not _ACTIVE:
        return
    with contextlib.suppress(ValueError, OSError):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        if _ACTIVE[0].wakeup_fd != -1:
            current = signal.set_wakeup_fd(-1)  # from the main thread only: else the child shares it
            if current != _ACTIVE[0].wakeup_fd:
                signal.set_wakeup_fd(current)


def _after_fork_in_parent() -> None:
    """The parent again: its wakeup fd back, SIGTERM unblocked (one that came during the fork arrives now)."""
    if not _ACTIVE:
        return
    with contextlib.suppress(ValueError, OSError):
        if _ACTIVE[0].wakeup_fd != -1 and signal.set_wakeup_fd(-1) == -1:
            signal.set_wakeup_fd(_ACTIVE[0].wakeup_fd, warn_on_full_buffer=False)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _after_fork_in_child() -> None:
    """In a child the program forked: Python's SIGTERM default, then SIGTERM unblocked (a pending one ends it)."""
    if not _ACTIVE:
        return
    handler = _ACTIVE.pop()
    with contextlib.suppress(ValueError, OSError):
        if signal.getsignal(signal.SIGTERM) is handler:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)
