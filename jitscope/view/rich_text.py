"""The terminal back end: a view model as rich renderables, and as plain text on a colourless console.

Plain text (pipes, NO_COLOR, ``--format text --out FILE``, tests) is the same renderables on a
colourless console, so the two never disagree. Charts are left to the HTML report (the bench
command keeps its own ASCII scaling chart in its text view), except timelines, listed as a table.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.table import Table as RichTable
from rich.text import Text

from jitscope.render.console import plain_console
from jitscope.render.ir import render_ir
from jitscope.render.lines import StyledLines
from jitscope.view.model import (
    Block,
    Chart,
    CodeListing,
    Document,
    KeyValues,
    Note,
    Panels,
    Paragraph,
    Pieces,
    Section,
    Table,
)
from jitscope.view.text import listing_lines, timeline_table

_LEVEL_STYLE = {"info": "", "good": "jitscope.good", "warning": "jitscope.warn", "error": "jitscope.bad",
                "muted": "jitscope.muted"}


def styled(p: Pieces) -> Text:
    """Pieces as one ``Text``; never parsed as markup (the user's text may hold [brackets])."""
    text = Text()
    for piece, style in p:
        text.append(piece, style or None)
    return text


def _heading(section: Section) -> Rule:
    if section.level <= 1:
        return Rule(Text(section.title, style=section.title_style or "jitscope.title"), align="left",
                    characters="━")
    text = Text(section.title, style=section.title_style or "jitscope.heading")
    if section.note:
        text.append(f"  {section.note}", style="jitscope.muted")
    return Rule(text, align="left", style="jitscope.muted")


def _section(section: Section) -> Iterator[RenderableType]:
    yield _heading(section)
    if section.gap:
        yield Text("")
    for i, block in enumerate(section.blocks):
        if isinstance(block, Section) and (i or not section.gap):
            yield Text("")
        yield render_block(block)


def _table(table: Table) -> RichTable:
    out = RichTable(box=None, pad_edge=False, show_header=table.show_header, header_style="jitscope.muted",
                    show_edge=False)
    for column in table.columns:
        out.add_column(column.name, justify=column.align, style=column.style or None)
    for row in table.rows:
        out.add_row(*[Text(cell) if isinstance(cell, str) else styled(cell) for cell in row])
    return out


def _key_values(block: KeyValues) -> RichTable:
    table = RichTable(box=None, pad_edge=False, show_header=False)
    table.add_column(style="jitscope.muted")
    table.add_column(justify="right", style=block.value_style or None)
    for label, value in block.rows:
        table.add_row(Text(label), Text(value))
    return table


class _ListingView:
    """A listing laid out for the console's width (the note column depends on it)."""

    def __init__(self, listing: CodeListing) -> None:
        self.listing = listing

    def __rich_console__(self, console, options):  # type: ignore[no-untyped-def]
        yield StyledLines(listing_lines(self.listing, options.max_width))

    def __rich_measure__(self, console, options):  # type: ignore[no-untyped-def]
        return StyledLines(listing_lines(self.listing, options.max_width)).__rich_measure__(console, options)


def _listing(listing: CodeListing) -> RenderableType:
    if listing.raw is not None and not any(line.note or line.number for line in listing.lines):
        if listing.language in ("stablehlo", "hlo"):
            return render_ir(listing.raw, listing.language)  # type: ignore[arg-type]
        return StyledLines([[(line, "")] if line else [] for line in listing.raw.removesuffix("\n").split("\n")])
    return _ListingView(listing)


def render_block(block: Block) -> RenderableType:
    if isinstance(block, Section):
        return Group(*_section(block))
    if isinstance(block, Paragraph):
        text = styled(block.text)
        if block.preformatted:
            text = Text("\n").join(Text("  ") + line for line in text.split("\n"))
        return text
    if isinstance(block, Note):
        label = f"{block.label}: " if block.label else ""
        return Text(label + block.text, style=_LEVEL_STYLE[block.level])
    if isinstance(block, KeyValues):
        return _key_values(block)
    if isinstance(block, Table):
        parts: list[RenderableType] = [Text(block.title, style="jitscope.heading")] if block.title else []
        return Group(*parts, _table(block))
    if isinstance(block, CodeListing):
        return _listing(block)
    if isinstance(block, Panels):
        return Group(*_spaced([render_block(b) for b in block.blocks]))
    if isinstance(block, Chart):
        return render_block(timeline_table(block)) if block.kind == "timeline" else Group()
    raise TypeError(f"not a view block: {type(block).__name__}")


def _spaced(parts: list[RenderableType]) -> list[RenderableType]:
    out: list[RenderableType] = []
    for part in parts:
        out += [part, Text("")]
    return out[:-1]


def render_rich(document: Document) -> RenderableType:
    """The document as one renderable: its blocks, a blank line after each."""
    parts: list[RenderableType] = []
    for block in document.blocks:
        parts += [render_block(block), Text("")]
    return Group(*parts)


def render_plain(document: Document, width: int = 100) -> str:
    """Plain text, as the terminal view reads without colour."""
    buffer = io.StringIO()
    plain_console(buffer, width).print(render_rich(document))
    return buffer.getvalue()
