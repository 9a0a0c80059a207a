"""jitscope run starts the program's module frame at the beginning of a frame-stack chunk, as python does,
wherever jitscope's own frames below it end (jitscope/run/frame_stack.py)."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from jitscope.run import frame_stack
from jitscope.run.frame_stack import exec_at_chunk_start

pytestmark = pytest.mark.skipif(frame_stack.frame_stack() is None, reason="needs CPython 3.11+'s frame stack")

#: A module body that records where its frame sits: (bytes from its chunk's start to the top, previous chunk).
WHERE = compile(
    "stack = frame_stack()\n"
    "SEEN.append((stack[1] - stack[0], ctypes.c_size_t.from_address(stack[0]).value))\n",
    "<where>", "exec",
)


def _pad(code: types.CodeType, run_globals: dict[str, Any]) -> None:
    exec_at_chunk_start(code, run_globals)


def test_the_program_frame_opens_a_fresh_chunk_from_every_depth() -> None:
    """Every word position of a chunk (a frame below grown one word at a time), the near-full end included."""
    import ctypes

    seen: list[tuple[int, int]] = []
    run_globals = {"frame_stack": frame_stack.frame_stack, "ctypes": ctypes, "SEEN": seen}
    for extra_words in range(0, 16384 // 8 + 16):
        code = _pad.__code__.replace(co_stacksize=_pad.__code__.co_stacksize + extra_words)
        padded = types.FunctionType(code, globals())
        padded(WHERE, run_globals)
    offsets = {offset for offset, _ in seen}
    assert len(offsets) == 1, sorted(offsets)[:5]
    assert offsets.pop() < 1024  # the chunk's header, then this one frame
    assert all(previous for _, previous in seen)  # never the first chunk: a fresh one


def test_jitscope_run_puts_the_program_where_python_does(tmp_path: Path) -> None:
    """One word apart: python's first chunk keeps its first word free, a later chunk does not."""
    script = tmp_path / "where.py"
    script.write_text("import ctypes\nfrom jitscope.run.frame_stack import frame_stack\n"
                      "stack = frame_stack()\nprint('AT', stack[1] - stack[0])\n")
    env_path = str(Path(frame_stack.__file__).parents[2])

    def offset(*command: str) -> int:
        done = subprocess.run([sys.executable, *command], capture_output=True, text=True, check=True,
                              env={"PYTHONPATH": env_path, "NO_COLOR": "1"}, cwd=tmp_path)
        return next(int(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("AT "))

    under_python = offset(str(script))
    under_run = offset("-m", "jitscope", "run", "--log", "none", str(script))
    assert under_python - under_run == 8


def _find_layout(unused: object, unused_too: object) -> Any:
    frame_stack._layout.cache_clear()
    return frame_stack._layout()


def test_the_frame_stack_is_found_from_every_depth() -> None:
    """The first look (cached for the process) may come right at a chunk's end: it is found all the same."""
    found = set()
    try:
        for extra_words in range(0, 16384 // 8 + 16):
            code = _find_layout.__code__
            padded = types.FunctionType(code.replace(co_stacksize=code.co_stacksize + extra_words), globals())
            found.add(padded(None, None))
    finally:
        frame_stack._layout.cache_clear()
    assert len(found) == 1
    assert None not in found
