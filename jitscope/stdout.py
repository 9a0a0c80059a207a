"""Keep stdout clean for machine-readable output while the user's code runs.

``--format json`` (and sarif, github) must be the only thing on stdout, but the user's
function may print: ``print`` and ``jax.debug.print`` write through ``sys.stdout``, and
C/C++ code (XLA, custom calls) writes to file descriptor 1 directly. While
``user_output_to_stderr()`` is active both go to stderr; afterwards the real stdout is
back, and the command writes its document there.

That leaves out what the user's code writes after the block: its ``atexit`` handlers, threads
still running when the command returns, child processes it started that outlive the call. So a
command whose document goes to stdout claims stdout from the start (``document_owns_stdout``): the
real stdout is kept on a private descriptor (not inherited by child processes), fd 1 and
``sys.stdout`` write to stderr for the rest of the process, and ``write_document_text`` writes the
document to the private descriptor and closes it (a reader such as ``| jq`` then sees the end of
the document at once, even while the user's threads run on).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

STDOUT_FD = 1
STDERR_FD = 2


def _flush_c_stdio() -> None:
    """Flush libc's stdout buffer, so C-level output written while redirected is not written later."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):  # no libc symbols (e.g. Windows): nothing buffered we can reach
        pass


def _redirect_fd() -> int | None:
    """Point fd 1 at fd 2 (at ``os.devnull`` when there was no stderr at start: fd 2 may be some other file now);
    returns a duplicate of the old fd 1 (not inherited by child processes), or None when there is no fd to
    redirect."""
    from jitscope.faults import devnull_on, fd_open

    try:
        saved = os.dup(STDOUT_FD)
    except OSError:
        return None
    try:
        if sys.__stderr__ is not None and fd_open(STDERR_FD):
            os.dup2(STDERR_FD, STDOUT_FD)
        else:
            devnull_on(STDOUT_FD)
    except OSError:
        os.close(saved)
        return None
    return saved


def _flush(stream: object) -> None:
    flush = getattr(stream, "flush", None)
    if flush is not None:
        with contextlib.suppress(OSError, ValueError):
            flush()


def standard_streams_open() -> None:
    """At start-up: a stdout or stderr closed when jitscope started (``>&-``) is ``os.devnull``, as Python's own
    ``print`` drops what it writes then, so jitscope and the user's code write to them as usual; and fd 1 or 2
    cannot be taken later by a file or pipe that jitscope or the user's code opens."""
    from jitscope.faults import devnull_on, fd_open, text_stream

    for fd, name in ((STDOUT_FD, "stdout"), (STDERR_FD, "stderr")):
        if getattr(sys, f"__{name}__") is not None or fd_open(fd):
            continue
        devnull_on(fd)
        stream = text_stream(fd, None)
        setattr(sys, f"__{name}__", stream)
        if getattr(sys, name) is None:
            setattr(sys, name, stream)


#: The real stdout, kept while the document owns it (``document_owns_stdout``); empty otherwise.
_DOCUMENT_FD: list[int] = []


def document_owns_stdout(active: bool = True) -> None:
    """For the rest of the process, stdout is the document's alone: fd 1 and ``sys.stdout`` write to stderr
    (to ``os.devnull`` when there was no stderr at start), and ``write_document_text`` writes to the real
    stdout. Nothing happens when there is no stdout, when it was claimed already, or when ``sys.stdout`` is not
    fd 1 (a caller captures it)."""
    from jitscope.faults import fd_open, text_stream

    if not active or _DOCUMENT_FD or sys.__stdout__ is None or not fd_open(STDOUT_FD) or not _on_fd_1(sys.stdout):
        return
    _flush(sys.stdout)  # what was written before belongs on stdout
    _flush_c_stdio()
    saved = _redirect_fd()
    if saved is None:
        return
    _DOCUMENT_FD.append(saved)
    sys.stdout = text_stream(STDOUT_FD, sys.stdout or sys.__stdout__)


def _on_fd_1(stream: object) -> bool:
    """Whether ``stream`` writes to fd 1: not so for a stream a caller put there (``CliRunner``, pytest's capsys),
    which the command's document is then written to, as before."""
    try:
        return stream.fileno() == STDOUT_FD  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return False


def write_document_text(text: str) -> None:
    """The command's document on stdout: the real stdout kept by ``document_owns_stdout`` (then closed, so that
    nothing written later reaches it), else ``sys.stdout``."""
    if not _DOCUMENT_FD:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    fd = _DOCUMENT_FD.pop()
    real = sys.__stdout__
    data = text.encode(getattr(real, "encoding", None) or "utf-8", getattr(real, "errors", None) or "strict")
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


@contextlib.contextmanager
def user_output_to_stderr(active: bool = True) -> Iterator[None]:
    """While active, ``sys.stdout`` and fd 1 both write to stderr; both are restored on exit.

    With ``active=False`` it does nothing, so a command can write ``with
    user_output_to_stderr(fmt is not Format.text):`` around the code that runs the user's.
    """
    if not active or _DOCUMENT_FD:  # claimed by the document: fd 1 and sys.stdout are stderr already
        yield
        return
    real_stdout = sys.stdout
    _flush(real_stdout)  # what was written before belongs on stdout
    _flush_c_stdio()
    saved_fd = _redirect_fd()
    # A stream of its own on fd 1 (now stderr), not sys.stderr itself: user code that closes one of the two
    # closes only that one, and is told which (faults.protected_state).
    from jitscope.faults import text_stream

    sys.stdout = text_stream(STDOUT_FD, sys.stderr) if saved_fd is not None else sys.stderr
    try:
        yield
    finally:
        _flush(sys.stdout)
        _flush(sys.stderr)
        _flush_c_stdio()
        sys.stdout = real_stdout
        if saved_fd is not None:
            os.dup2(saved_fd, STDOUT_FD)
            os.close(saved_fd)
