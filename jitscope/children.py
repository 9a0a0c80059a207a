"""Child processes jitscope starts end with it: each in a process group of its own, killed whole (issue 30).

A child of ``jitscope diff --base-env`` (another interpreter), of ``bench --cold-process`` or of
``--processes`` may hang, and may start children of its own (the user's code: ``os.system``,
``multiprocessing``). Killing only the child leaves those running. So every child starts in a new
session (its own process group: a Ctrl-C at the terminal is no longer sent to it), and the whole group
is killed when the child runs past its time limit, and when jitscope stops: an exception in the waiting
thread (Ctrl-C's ``KeyboardInterrupt``), SIGTERM (the handler below kills the groups, then jitscope ends
by SIGTERM as it would have), or Ctrl-C's hard exit (``faults.end_interrupted`` calls ``kill_all``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from typing import Any

#: The process groups of the children running now (their leaders' pids).
_LIVE: set[int] = set()


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """Kill ``proc``'s process group (its own, from ``start_new_session``) and reap the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    _LIVE.discard(proc.pid)


def kill_all() -> None:
    """Kill every child's process group still running (the process is about to end)."""
    for pid in list(_LIVE):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    _LIVE.clear()


def _on_sigterm(signum: int, frame: Any) -> None:
    global _deferred
    if _starting:  # a child is being started: its group is killed once it is known (start() ends it)
        _deferred = True
        return
    _end_by_sigterm()


def _end_by_sigterm() -> None:
    kill_all()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)  # ended by SIGTERM, as without this handler


#: Children being started now, and whether a SIGTERM came meanwhile (handled once the child is in ``_LIVE``).
_starting = 0
_deferred = False


def _handle_sigterm() -> None:
    """Install the handler (the main thread only, where none of the user's is installed)."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)


def _release_sigterm() -> None:
    """Give SIGTERM back its default once no child is running."""
    if (not _LIVE and not _starting and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) is _on_sigterm):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def group_of(proc: subprocess.Popen[Any]) -> Iterator[subprocess.Popen[Any]]:
    """While the block runs, ``proc`` (from ``start``) is killed with its group when jitscope stops; on leaving
    the block its group is killed (all of it when the block raised: the time limit, Ctrl-C; what the child
    left running when it had ended)."""
    _LIVE.add(proc.pid)
    _handle_sigterm()
    try:
        yield proc
    finally:
        kill_group(proc)  # what it started and left running ends with it
        _release_sigterm()


def start(args: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` in a new session (see the module docstring): use it inside ``group_of``. The child
    is known to the SIGTERM handler and to Ctrl-C's end from its first moment: a SIGTERM or a Ctrl-C that comes
    while it starts is held until its pid is in ``_LIVE``, then ends jitscope and the child's group (a
    ``KeyboardInterrupt`` raised inside ``Popen``, after the fork, lost the child: it outlived jitscope)."""
    global _starting, _deferred
    _handle_sigterm()
    _starting += 1
    with _ctrl_c_held():  # a Ctrl-C's handler runs once the child is known (Ctrl-C's end kills its group)
        try:
            proc = subprocess.Popen(args, start_new_session=True, **popen)
            _LIVE.add(proc.pid)
        finally:
            _starting -= 1
            if _deferred and not _starting:
                _deferred = False
                _end_by_sigterm()
            _release_sigterm()  # Popen failed: nothing to guard
    return proc


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """While the block runs, a SIGINT is noted instead of running the handler in
    the middle of it; the handler is put back and run after (it raises the ``KeyboardInterrupt`` then).
    Only in the main thread, over a Python handler (Python's default, or ``faults.exit_soon_after_interrupt``'s
    that every command but ``run`` installs)."""
    held: list[bool] = []
    handler = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if not callable(handler):
        yield
        return
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        if held:
            handler(signal.SIGINT, None)  # Ctrl-C's own handler: it raises KeyboardInterrupt


def run(args: Sequence[str], *, timeout: float | None, input: Any = None, **popen: Any
        ) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(args, capture_output=True)``, the child and everything it started killed on the time
    limit (then ``subprocess.TimeoutExpired`` is raised), Ctrl-C or SIGTERM."""
    stdin = subprocess.PIPE if input is not None else subprocess.DEVNULL
    pipes = {"stdin": stdin, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with start(args, **pipes, **popen) as proc, group_of(proc):
        stdout, stderr = proc.communicate(input, timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
