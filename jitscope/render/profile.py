"""pyinstrument profiles: shown in the terminal, or written as HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console


def show_profiles(profilers: list[tuple[str, Any]], *, html: Path | None, console: Console) -> None:
    """Print each profiler's call tree (or save the first as HTML when ``html`` is given)."""
    for i, (label, profiler) in enumerate(profilers):
        if html is not None:
            path = html if len(profilers) == 1 else html.with_name(f"{html.stem}-{i + 1}{html.suffix}")
            path.write_text(profiler.output_html())
            console.print(f"profile of {label} written to {path}", style="jitscope.muted")
            continue
        console.rule(f"profile of tracing {label}", align="left", style="jitscope.muted")
        text = profiler.output_text(unicode=True, color=console.is_terminal and not console.no_color,
                                    show_all=False)
        console.file.write(text)
