"""The terminal back end: a view model as rich renderables, and as plain text on a colourless console.

Plain text (pipes, NO_COLOR, ``--format text --out FILE``, tests) is the same renderables on a
colourless console, so the two never disagree. Charts are left to the HTML report, except
timelines, listed as a table, and log-log charts, drawn in characters (``report/writers/ascii_chart.py``).
Prose (``wrap``) is wrapped to the width even on a piped console, which never folds IR lines.
Text for piped stdout is mostly written by ``plain_text.py`` instead: the same bytes, without rich.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.rule import Rule
from rich.table import Table as RichTable
from rich.text import Text

from jitscope.report.views.document import (
    Block,
    Chart,
    CodeListing,
    Document,
    Fit,
    KeyValues,
    Note,
    Panels,
    Paragraph,
    Pieces,
    Section,
    Table,
    tables_in,
)
from jitscope.report.views.ir import render_ir
from jitscope.report.views.lines import StyledLines
from jitscope.report.writers.console import PIPE_WIDTH, make_console
from jitscope.report.writers.listings import listing_lines, timeline_table

_LEVEL_STYLE = {"info": "", "good": "jitscope.good", "warning": "jitscope.warn", "error": "jitscope.bad",
                "muted": "jitscope.muted"}


def styled(p: Pieces) -> Text:
    """Pieces as one ``Text``; never parsed as markup (the user's text may hold [brackets])."""
    text = Text()
    for piece, style in p:
        text.append(piece, style or None)
    return text


def _heading(section: Section) -> RenderableType:
    if section.level <= 1:
        return _TitleRule(Text(section.title, style=section.title_style or "jitscope.title"))
    text = Text(section.title, style=section.title_style or "jitscope.heading")
    if section.note:
        text.append(f"  {section.note}", style="jitscope.muted")
    return Rule(text, align="left", style="jitscope.muted")


def _section(section: Section) -> Iterator[RenderableType]:
    if not section.title:  # a plain group
        yield from (render_block(block) for block in section.blocks)
        return
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


class _Wrapped:
    """Text wrapped to the width as explicit lines, so a soft-wrapping (piped) console keeps them."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = self.text.wrap(console, max(20, options.max_width))
        for line in lines:
            line.rstrip()
        yield lines

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.text)


class _TitleRule:
    """A heavy rule titled on its left; a title too long for one line (a call's arguments) is
    wrapped above a bare rule instead of being cut with an ellipsis."""

    def __init__(self, title: Text) -> None:
        self.title = title

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.title.cell_len + 4 <= options.max_width:
            yield Rule(self.title, align="left", characters="━")
            return
        yield _Wrapped(self.title)
        yield Rule(characters="━")


class _FitView:
    """``Fit``: its blocks, or its narrow blocks when one of its tables is wider than the console."""

    def __init__(self, fit: Fit) -> None:
        self.fit = fit

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        wide = options.update(max_width=10_000)
        too_wide = any(Measurement.get(console, wide, _table(t)).maximum > options.max_width
                       for t in tables_in(self.fit.blocks))
        yield Group(*_spaced([render_block(b) for b in (self.fit.narrow if too_wide else self.fit.blocks)]))


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
        return _Wrapped(text) if block.wrap else text
    if isinstance(block, Note):
        label = f"{block.label}: " if block.label else ""
        note = Text(label + block.text, style=_LEVEL_STYLE[block.level])
        return _Wrapped(note) if block.wrap else note
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
        if block.kind == "loglog":
            from jitscope.report.writers.ascii_chart import LogLogChart  # only bench's scaling charts

            return LogLogChart(block)
        return render_block(timeline_table(block)) if block.kind == "timeline" else Group()
    if isinstance(block, Fit):
        return _FitView(block)
    raise TypeError(f"not a view block: {type(block).__name__}")


def _spaced(parts: list[RenderableType]) -> list[RenderableType]:
    out: list[RenderableType] = []
    for part in parts:
        out += [part, Text("")]
    return out[:-1]


def _title(document: Document) -> list[RenderableType]:
    """The title as a heavy rule, the subtitle under it; a report of one page (one traced call) is
    titled by its page alone."""
    pages = [b for b in document.blocks if isinstance(b, Section) and b.level <= 1]
    if not document.title or (len(pages) == 1 and document.title.endswith(pages[0].title)):
        return []
    parts: list[RenderableType] = [_TitleRule(Text(document.title, style="jitscope.title"))]
    if document.subtitle:
        parts.append(_Wrapped(Text(document.subtitle, style="jitscope.muted")))
    return parts


def render_rich(document: Document) -> RenderableType:
    """The document as one renderable: its title, then its blocks, a blank line between them."""
    return Group(*_title(document), *_spaced([render_block(block) for block in document.blocks]))


def render_plain(document: Document, width: int = PIPE_WIDTH) -> str:
    """Plain text (``--out FILE.txt``, ``result.render("text")``): the same bytes as the report piped to a file,
    so IR lines are never folded; laid out without rich (``plain_text.py``) where it can be."""
    if width == PIPE_WIDTH:
        from jitscope.report.writers.plain_text import enabled, render_piped

        text = render_piped(document) if enabled() else None
        if text is not None:
            return text
    buffer = io.StringIO()
    make_console(file=buffer, width=width).print(render_rich(document))
    return buffer.getvalue()
