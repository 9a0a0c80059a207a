"""SIGTERM while ``jitscope run``'s program runs: the program ends, and its report is still written (issue 30).

Python's default for SIGTERM ends the process at once, before jitscope can write the report. While
the program runs, a handler raises ``Terminated`` in it instead, which ``run_program`` turns into exit
143 (as a shell reports a process that SIGTERM killed), and the report is written as for any exit.

A Python handler runs only when the main thread is back in Python bytecode: a program stuck in C (a
collective that never completes) would then outlive the SIGTERM its launcher sends before SIGKILL.
So a watchdog thread, woken through ``signal.set_wakeup_fd`` as Ctrl-C's is in the other commands
(``faults.exit_soon_after_interrupt``), gives the main thread ``GRACE_S`` seconds to take the signal,
then ends the process with exit 143 and one line saying so (what a multi-process run checkpointed is
left, as before). A program that installs its own SIGTERM handler, or its own wakeup fd, keeps it.
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


@contextlib.contextmanager
def sigterm_ends_the_program(grace: float = GRACE_S) -> Iterator[None]:
    """While the block runs, SIGTERM raises ``Terminated`` in the main thread (see the module docstring)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    taken = threading.Event()

    def terminated(signum: int, frame: Any) -> None:
        taken.set()
        raise Terminated

    signal.signal(signal.SIGTERM, terminated)
    stop_watching = _watch(taken, grace)
    try:
        yield
    finally:
        stop_watching()
        if signal.getsignal(signal.SIGTERM) is terminated:  # a handler the program installed stays
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _watch(taken: threading.Event, grace: float) -> Any:
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
    stopped = threading.Event()

    def watch() -> None:
        try:
            while not stopped.is_set():
                data = os.read(read_fd, 64)
                if not data or stopped.is_set():
                    return
                if signal.SIGTERM in data and not taken.wait(grace) and not stopped.is_set():
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
        with contextlib.suppress(ValueError, OSError):
            current = signal.set_wakeup_fd(-1)
            if current != write_fd:  # the program set its own since: put it back
                signal.set_wakeup_fd(current)
        with contextlib.suppress(OSError):
            os.write(write_fd, b"\0")  # wakes the watchdog, which then ends
        os.close(write_fd)

    return stop
