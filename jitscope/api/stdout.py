"""Keep stdout clean for machine-readable output while the user's code runs.

``--format json`` (and sarif, github) must be the only thing on stdout, but the user's
function may print: ``print`` and ``jax.debug.print`` write through ``sys.stdout``, and
C/C++ code (XLA, custom calls) writes to file descriptor 1 directly. While
``user_output_to_stderr()`` is active both go to stderr; afterwards the real stdout is
back, and the command writes its document there.
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
    """Point fd 1 at fd 2; returns a duplicate of the old fd 1, or None when there is no fd to redirect."""
    try:
        saved = os.dup(STDOUT_FD)
    except OSError:
        return None
    try:
        os.dup2(STDERR_FD, STDOUT_FD)
    except OSError:
        os.close(saved)
        return None
    return saved


def _flush(stream: object) -> None:
    flush = getattr(stream, "flush", None)
    if flush is not None:
        with contextlib.suppress(OSError, ValueError):
            flush()


@contextlib.contextmanager
def user_output_to_stderr(active: bool = True) -> Iterator[None]:
    """While active, ``sys.stdout`` and fd 1 both write to stderr; both are restored on exit.

    With ``active=False`` it does nothing, so a command can write ``with
    user_output_to_stderr(fmt is not Format.text):`` around the code that runs the user's.
    """
    if not active:
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
