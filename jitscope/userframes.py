"""Which code is the user's, and tracebacks trimmed to it.

Used by target loading (import errors), tracing (trace-time failures) and bench
(run-time failures): the user sees their own frames, not jitscope's, importlib's
or JAX's.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import traceback
from pathlib import Path

_JITSCOPE_DIR = str(Path(__file__).resolve().parent)


@functools.cache
def _library_roots() -> tuple[str, ...]:
    roots = {_JITSCOPE_DIR}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(str(Path(path).resolve()))
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        roots.add(str(Path(prefix, "lib").resolve()))
    return tuple(sorted(roots))


@functools.cache
def is_user_file(filename: str) -> bool:
    """True when ``filename`` belongs to the user's project, not to Python, a library or jitscope."""
    if not filename or filename.startswith("<"):
        # <frozen importlib._bootstrap>, <string>; but <stdin>/<ipython-input> count as user code
        return filename.startswith(("<stdin", "<ipython"))
    if "site-packages" in filename or "dist-packages" in filename:
        return False
    resolved = os.path.realpath(filename)
    return not any(resolved == root or resolved.startswith(root + os.sep) for root in _library_roots())


def user_frames(tb: traceback.StackSummary) -> list[traceback.FrameSummary]:
    """The frames of ``tb`` that are in user code."""
    return [frame for frame in tb if is_user_file(frame.filename)]


def display_path(filename: str) -> str:
    """``filename`` relative to the current directory when it is below it, as users typed it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if rel.startswith("..") else rel


def exception_message(exc: BaseException) -> str:
    """``str(exc)`` without the boilerplate JAX appends about filtered frames."""
    text = str(exc).split("\n--------------------")[0]
    return "\n".join(line for line in text.splitlines() if not line.startswith("For simplicity, JAX"))


def format_user_traceback(exc: BaseException, *, limit_frames: int = 12) -> str:
    """A traceback of ``exc`` trimmed to the user's frames, ending with the exception line.

    Chained causes are dropped: the user wants the line in their code that failed,
    not JAX's internal re-raises.
    """
    frames = user_frames(traceback.extract_tb(exc.__traceback__))[-limit_frames:]
    lines = ["Traceback (user code only):"] if frames else []
    lines += [line.rstrip("\n") for line in traceback.format_list(frames)]
    name = type(exc).__qualname__
    module = type(exc).__module__
    if module not in ("builtins", "__main__"):
        name = f"{module}.{name}"
    lines.append(f"{name}: {exception_message(exc)}".rstrip(": "))
    return "\n".join(lines)


def count_user_frames(exc: BaseException) -> int:
    return len(user_frames(traceback.extract_tb(exc.__traceback__)))


def last_user_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of ``exc``'s traceback that is in user code."""
    frames = user_frames(traceback.extract_tb(exc.__traceback__))
    return frames[-1] if frames else None
