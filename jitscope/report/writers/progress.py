"""A transient progress bar on stderr for long work (bench rows, tracing many targets)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

#: ``update(completed, total, text)``: analysis code reports progress without importing rich.
ProgressCallback = Callable[[float, int, str], None]


def no_progress(completed: float, total: int, text: str) -> None:
    return None


def progress_on_stderr(title: str = "jitscope") -> contextlib.AbstractContextManager[ProgressCallback]:
    """``progress_bar`` on a stderr console, which is made (with rich's imports) only when stderr may be a
    terminal."""
    from jitscope.report.writers.console import make_console, may_be_terminal

    if not may_be_terminal(sys.stderr):
        return contextlib.nullcontext(no_progress)

    return progress_bar(make_console(stderr=True), title)


@contextlib.contextmanager
def progress_bar(console: Console, title: str = "jitscope") -> Iterator[ProgressCallback]:
    """A transient progress bar on ``console`` (stderr) when it is a terminal; otherwise a no-op callback."""
    if not console.is_terminal:
        yield no_progress
        return
    # rich.progress (~8 ms of imports) only when a bar is shown: piped runs never pay for it.
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    # markup=False: descriptions quote the user's calls, e.g. "f(f32[8], mode='[x]')".
    progress = Progress(TextColumn("{task.description}", markup=False), BarColumn(), TimeElapsedColumn(),
                        console=console, transient=True)
    with progress:
        task = progress.add_task(title, total=1)

        def update(completed: float, total: int, text: str) -> None:
            progress.update(task, completed=completed, total=max(total, 1), description=text)

        yield update
