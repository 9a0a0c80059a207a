"""pyinstrument profiles (trace's tracing, bench's cold call): shown in the terminal, or written as HTML."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text


def show_profiles(
    profilers: Sequence[tuple[str, Any]],
    *,
    html: Path | None,
    console: Console,
    subject: str = "tracing",
    note: str = "",
) -> None:
    """Print each profiler's call tree on ``console``, or write HTML files (FILE, FILE-2, ...).

    Headings read "profile of {subject} {label}", with ``note`` in parentheses after them.
    """
    for i, (label, profiler) in enumerate(profilers):
        if html is not None:
            path = html if i == 0 else html.with_name(f"{html.stem}-{i + 1}{html.suffix}")
            from jitscope.outputs import write_atomic

            write_atomic(path, profiler.output_html())
            console.print(Text(f"profile of {subject} {label} written to {path}", style="jitscope.muted"))
            continue
        title = f"profile of {subject} {label}" + (f" ({note})" if note else "")
        console.rule(Text(title), align="left", style="jitscope.muted")
        console.file.write(profiler.output_text(unicode=True, color=console.is_terminal and not console.no_color))
