"""Styled lines: the fast path from a layout to plain text, a rich ``Text`` or console segments.

A layout is a list of lines, each a list of ``(text, style name)`` pieces ("" for no
style). Plain text joins the pieces; the rich view turns them straight into segments.
Rich's word wrapping is what makes a 20,000-line ``Text`` slow, so it is used only for
the rare line wider than the console (and never when the console soft-wraps).

rich is imported where it is used, not here: piped text (``report/writers/plain_text.py``) lays out
the same lines without loading it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.measure import Measurement
    from rich.style import Style
    from rich.text import Text

Piece = tuple[str, str]
Line = list[Piece]


def line_width(line: Line) -> int:
    return sum(len(text) for text, _ in line)


def lines_to_plain(lines: list[Line]) -> str:
    """The lines as plain text, each ending in a newline."""
    return "".join(["".join([text for text, _ in line]) + "\n" for line in lines])


def lines_to_text(lines: list[Line]) -> Text:
    """One styled, non-wrapping ``Text`` (convenient for tests and embedding; slow to wrap when huge)."""
    from rich.text import Span, Text

    parts: list[str] = []
    spans: list[Span] = []
    pos = 0
    for i, line in enumerate(lines):
        if i:
            parts.append("\n")
            pos += 1
        for text, style in line:
            end = pos + len(text)
            if style:
                spans.append(Span(pos, end, style))
            parts.append(text)
            pos = end
    return Text("".join(parts), spans=spans, no_wrap=True, overflow="ignore", end="\n")


@dataclass(frozen=True, slots=True)
class StyledLines:
    """A rich renderable for a list of styled lines."""

    lines: list[Line]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment
        from rich.style import Style

        width = options.max_width
        fold = not options.no_wrap
        newline = Segment.line()
        # Without colour the styles are dropped anyway: one segment per line is much cheaper.
        plain = console.no_color or console.color_system is None
        styles: dict[str, Style] = {"": Style.null()}
        for line in self.lines:
            if fold and line_width(line) > width:
                yield from console.render(_wrapping_text(line), options)
                continue
            if plain:
                yield Segment("".join([text for text, _ in line]))
            else:
                for text, name in line:
                    style = styles.get(name)
                    if style is None:
                        style = styles[name] = console.get_style(name)
                    yield Segment(text, style)
            yield newline

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        from rich.measure import Measurement

        widest = max((line_width(line) for line in self.lines), default=0)
        return Measurement(min(widest, options.max_width), min(widest, options.max_width))


def _wrapping_text(line: Line) -> Text:
    from rich.text import Text

    text = Text(no_wrap=False, overflow="fold")
    for piece, style in line:
        text.append(piece, style or None)
    return text
