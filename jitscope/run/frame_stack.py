"""Start the user's program where ``python`` starts it: at the beginning of a frame-stack chunk.

CPython 3.11+ keeps the frames of Python calls in 16 KiB chunks. A call that does not fit in
the current chunk maps a new one, and returning from the call that opened a chunk unmaps it
again, so a loop of calls that goes back and forth across a chunk's end maps and unmaps a chunk
on every crossing (``_PyThreadState_BumpFramePointerSlow``: a page fault or more each time).
Where the crossings fall depends on how deep the program's first frame sits. Under ``python``
the script's module frame is the first frame of the first chunk; under ``jitscope run`` some
twenty frames of jitscope, typer and runpy sit below it, which moves every chunk end, and a
program can be unlucky there where it is not under ``python``: ``import haiku`` made 35,000
more page faults (0.25 s of system time, ~4% of a small haiku training program).

So the program's module frame is made to open a fresh chunk, as under ``python`` (8 bytes off:
the first chunk keeps one word free). The frame that calls ``exec`` is sized to fill what is
left of the current chunk (a copy of a two-line function with a larger ``co_stacksize``, which
only reserves room), so the next frame, the program's, cannot fit and starts the next chunk.
The current chunk's top and end are read from the thread state with ctypes; that memory is
only read, and where the fields cannot be recognised (another interpreter, a layout this code
does not know) the program simply runs as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import runpy
import sys
import types
from collections.abc import Iterator
from typing import Any

_WORD = ctypes.sizeof(ctypes.c_void_p)
#: How far into the thread state to look for the frame-stack fields (words 37-39 on 3.11, 29-31 on 3.12
#: and 3.13). Only the words up to the match are read.
_SCAN_WORDS = 64
_EMPTY = compile("", "<jitscope>", "exec")


@contextlib.contextmanager
def programs_start_at_a_chunk() -> Iterator[None]:
    """While open, ``runpy`` runs a module's code in a frame that opens a fresh frame-stack chunk."""
    original = runpy._run_code  # type: ignore[attr-defined]

    def run_code(
        code: types.CodeType, run_globals: dict[str, Any], *args: Any, **kwargs: Any
    ) -> dict[str, Any]:
        original(_EMPTY, run_globals, *args, **kwargs)  # runpy's own set-up of the module's globals
        exec_at_chunk_start(code, run_globals)
        return run_globals

    runpy._run_code = run_code  # type: ignore[attr-defined]
    try:
        yield
    finally:
        runpy._run_code = original  # type: ignore[attr-defined]


def exec_at_chunk_start(code: types.CodeType, run_globals: dict[str, Any]) -> None:
    """``exec(code, run_globals)`` with the new frame first in a fresh frame-stack chunk (where it can be)."""
    layout = _layout()
    stack = frame_stack()
    if layout is None or stack is None:
        exec(code, run_globals)  # noqa: S102 - running the user's program is the point
        return
    room = (stack[2] - stack[1]) // _WORD
    # The filler's frame must fit (strictly below the chunk's end) and leave less than any frame needs.
    extra = room - 1 - layout[1]
    if extra >= _exec_in_frame.__code__.co_stacksize:
        _resized(_exec_in_frame, extra)(code, run_globals)
    else:  # too near the end for a filler: open the next chunk with a larger frame and fill that one
        _resized(_start_over, room)(code, run_globals)


def frame_stack() -> Any:
    """This thread's (chunk, top, limit) frame-stack pointers as a live ctypes array, or None."""
    layout = _layout()
    if layout is None:
        return None
    return (ctypes.c_size_t * 3).from_address(_thread_state() + layout[0] * _WORD)


@functools.cache
def _layout() -> tuple[int, int] | None:
    """Where the frame-stack pointers are in a thread state (in words), and the size of a two-argument
    function's frame less its value stack (in words); None where they cannot be recognised."""
    if sys.implementation.name != "cpython" or sys.version_info < (3, 11):
        return None
    try:
        thread_state = _thread_state()
        words = (ctypes.c_size_t * _SCAN_WORDS).from_address(thread_state)
        for index in range(_SCAN_WORDS - 2):
            chunk, top, limit = words[index], words[index + 1], words[index + 2]
            if not chunk or not chunk < top < limit or limit - chunk > 1 << 24:
                continue
            if (chunk | top | limit) % _WORD:
                continue
            # _PyStackChunk: previous, size, top, data[]: a real chunk knows its own size
            if ctypes.c_size_t.from_address(chunk + _WORD).value != limit - chunk:
                continue
            # and its top moves up by a small frame while a call runs (a look-alike field does not)
            # (measured again one frame deeper when the first call had to open a new chunk)
            candidate = (ctypes.c_size_t * 3).from_address(thread_state + index * _WORD)
            for probe in (_probe, _resized(_probe, 64)):
                frame = probe(candidate, None)
                if 0 < frame < 4096 and not frame % _WORD:
                    return index, frame // _WORD - _measure.__code__.co_stacksize
    except (AttributeError, OSError, ValueError, TypeError):
        return None
    return None


def _thread_state() -> int:
    get_thread_state = ctypes.PYFUNCTYPE(ctypes.c_void_p)(("PyThreadState_Get", ctypes.pythonapi))
    return int(get_thread_state())


def _resized(function: types.FunctionType, stack_size: int) -> types.FunctionType:
    """A copy of ``function`` whose frame reserves ``stack_size`` value-stack slots: never fewer than its
    code needs (CPython trusts ``co_stacksize``; more only leaves room unused)."""
    code = function.__code__
    resized = code.replace(co_stacksize=max(stack_size, code.co_stacksize))
    return types.FunctionType(resized, function.__globals__)


def _measure(stack: Any, unused: object) -> int:
    """The frame stack's top with this frame on it: the same locals as ``_exec_in_frame``."""
    return int(stack[1])


def _probe(stack: Any, unused: object) -> int:
    """The size of ``_measure``'s frame in bytes, if the field at ``stack`` is the frame stack's."""
    before = int(stack[1])
    return _measure(stack, None) - before


def _exec_in_frame(code: types.CodeType, run_globals: dict[str, Any]) -> None:
    exec(code, run_globals)  # noqa: S102


def _start_over(code: types.CodeType, run_globals: dict[str, Any]) -> None:
    exec_at_chunk_start(code, run_globals)
