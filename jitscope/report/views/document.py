"""The view model: what a report shows, as plain data, with no say in how it looks.

A command turns its records into a ``Document`` (``report/views/trace.py``, ``report/views/bench.py``,
``report/views/lint.py``); every back end renders any document. Text is styled by *name* (the
Theme's ``jaxpr.var``, ``jitscope.muted``...): the terminal maps names to colours, HTML to
CSS classes, Markdown and plain text drop them. Charts are data series, drawn by each back
end as it can (SVG in HTML, a table in Markdown, nothing or ASCII in the terminal).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

#: A run of text and its style name ("" for none).
Piece = tuple[str, str]
Pieces = tuple[Piece, ...]
Align = Literal["left", "right"]
Level = Literal["info", "good", "warning", "error", "muted"]


def pieces(text: str, style: str = "") -> Pieces:
    return ((text, style),)


def plain(p: Pieces) -> str:
    return "".join(text for text, _ in p)


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One line (or a few, with newlines) of styled text."""

    text: Pieces
    #: Indented as a block of quoted output (e.g. what the user's code printed).
    preformatted: bool = False
    #: Prose: the terminal wraps it to its width even when piped (where IR lines are never folded).
    wrap: bool = False


@dataclass(frozen=True, slots=True)
class Note:
    """A warning, error or remark, set apart from the rest."""

    text: str
    level: Level = "info"
    label: str = ""  # "warning", "error", "fix" ...; "" for none
    #: Wrapped to the terminal's width even when piped (see ``Paragraph.wrap``).
    wrap: bool = False


@dataclass(frozen=True, slots=True)
class KeyValues:
    """Label / value rows (cost and memory analysis, settings)."""

    rows: tuple[tuple[str, str], ...]
    value_style: str = "jitscope.number"


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    align: Align = "left"
    style: str = ""


Cell = str | Pieces


@dataclass(frozen=True, slots=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    show_header: bool = True
    title: str = ""


@dataclass(frozen=True, slots=True)
class CodeLine:
    """One line of a listing, with what it links to.

    ``src`` and ``op`` are link keys: every element of a document with the same ``src`` is
    the same line of the user's source; ``ops`` name the compiled operations a line became
    (jaxpr equations) or is (HLO instructions). ``fold`` > 0 opens that many collapsible
    blocks at this line (the line is their summary), ``unfold`` closes that many after it.
    """

    text: Pieces
    number: int | None = None  # a source line number
    note: str = ""  # shown at the end (a jaxpr equation's "mlp.py:28")
    src: str = ""
    ops: tuple[str, ...] = ()
    mark: bool = False  # emphasised (a finding's line, a failing line)
    fold: int = 0
    unfold: int = 0
    #: The first block ``fold`` opens starts closed in HTML (folded library code the reader opens on demand).
    folded: bool = False
    heat: float | None = None  # 0..1, a heat map's weight
    #: Characters [start, end) of the text to point at (a finding's column span): carets under the
    #: line in text, an underline in HTML; ``underline_style`` colours them.
    underline: tuple[int, int] | None = None
    underline_style: str = ""


@dataclass(frozen=True, slots=True)
class CodeListing:
    """Code: source, jaxpr, StableHLO, HLO. ``language`` picks highlighting and CSS."""

    lines: tuple[CodeLine, ...]
    language: str = ""  # "python", "jaxpr", "stablehlo", "hlo", "text"
    title: str = ""
    id: str = ""
    #: The text, when the listing is big and has no links: back ends can print it without walking lines.
    raw: str | None = None
    #: Spaces before every line in text (a code frame under a finding's line).
    indent: int = 0


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    points: tuple[tuple[float, float], ...]
    style: str = ""


@dataclass(frozen=True, slots=True)
class Span:
    """One bar of a ``timeline`` chart: in lane ``lane``, from ``start``, the chart's series end to end."""

    lane: int  # index into the chart's categories
    start: float  # x, e.g. seconds since the program started
    lengths: tuple[float, ...]  # one segment per series of the chart (its phases), drawn one after another
    label: str = ""  # a few words shown beside the bar (a recompile's cause)
    title: str = ""  # the whole story: tooltip in HTML, one row in text
    mark: bool = False  # emphasised (a recompile)
    quiet: bool = False  # drawn, but not listed in text (JAX's internal compiles)


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart as data. ``kind``:

    - ``bars``: one stacked horizontal bar per category; each series gives one segment per
      category (``points[i] = (category index, value)``), e.g. cold-call phases.
    - ``distribution``: the first series' y values are samples (a strip plot with median and IQR).
    - ``loglog``: scatter + fitted line per series on log-log axes; ``fits`` gives (slope, intercept in log10).
    - ``timeline``: one lane per category, ``spans`` placed on an x axis (seconds since a start), each
      a stack of the series' segments (compile phases); the series carry names only. Text back ends
      list the spans (``report/writers/listings.py``: ``timeline_table``).
    """

    kind: Literal["bars", "distribution", "loglog", "timeline"]
    title: str
    series: tuple[Series, ...]
    categories: tuple[str, ...] = ()
    x_label: str = ""
    y_label: str = ""
    x_unit: Literal["seconds", "bytes", "count", ""] = ""
    y_unit: Literal["seconds", "bytes", "count", ""] = ""
    fits: tuple[tuple[str, float, float], ...] = ()  # (series name, slope, log10 intercept)
    caption: str = ""
    spans: tuple[Span, ...] = ()  # timeline bars
    x_range: tuple[float, float] | None = None  # a timeline's axis (the program's run), else the spans' extent


@dataclass(frozen=True, slots=True)
class Panels:
    """Blocks meant to be seen side by side (IR next to the source); text back ends stack them."""

    blocks: tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class Section:
    """A titled part of a document. ``level`` 1 is a page title (one traced call, one file).

    A section with no title is a plain group: its blocks, no heading, no blank lines between them.
    """

    title: str
    blocks: tuple[Block, ...]
    note: str = ""
    level: int = 2
    id: str = ""
    #: A blank line between the heading and the blocks in text (listings read better that way).
    gap: bool = False
    #: Collapsed by default in HTML (``<details>``); text shows it all.
    collapsed: bool = False
    title_style: str = ""


@dataclass(frozen=True, slots=True)
class Fit:
    """The same content twice: ``blocks`` as it should read, ``narrow`` made narrower (long names
    abbreviated). The terminal shows ``narrow`` when a table in ``blocks`` would be wider than the
    console; other back ends (no width to fit) show ``blocks``."""

    blocks: tuple[Block, ...]
    narrow: tuple[Block, ...]


Block = Paragraph | Note | KeyValues | Table | CodeListing | Chart | Panels | Section | Fit


def tables_in(blocks: tuple[Block, ...]) -> Iterator[Table]:
    """The tables among ``blocks`` and in their sections and panels (what decides a ``Fit``)."""
    for block in blocks:
        if isinstance(block, Table):
            yield block
        elif isinstance(block, Section | Panels):
            yield from tables_in(block.blocks)


@dataclass(frozen=True, slots=True)
class Document:
    """A whole report: what ``--format markdown|html`` writes and the terminal prints."""

    title: str
    kind: str  # "trace", "bench", "lint", "run"
    blocks: tuple[Block, ...]
    subtitle: str = ""
    meta: tuple[tuple[str, str], ...] = ()  # environment and settings, shown in a footer
    extra: dict[str, str] = field(default_factory=dict)


def compact(document: Document, max_lines: int) -> tuple[Document, int]:
    """``document`` with every code listing longer than ``max_lines`` (a jaxpr, an HLO module) replaced by a note
    of its length, and how many lines were left out: the summary, tables and charts of a report without the
    IR, which can be megabytes (an inline notebook report)."""
    left_out = 0

    def block(b: Block, count: bool) -> Block:
        nonlocal left_out
        if isinstance(b, CodeListing) and len(b.lines) > max_lines:
            left_out += len(b.lines) if count else 0
            what = f"{b.language} listing" if b.language else "listing"
            return Note(f"{what} of {len(b.lines):,} lines: in the full report", "muted")
        if isinstance(b, Section):
            return dataclasses.replace(b, blocks=blocks(b.blocks, count))
        if isinstance(b, Panels):
            return Panels(blocks(b.blocks, count))
        if isinstance(b, Fit):  # the same content twice: counted once
            return Fit(blocks(b.blocks, count), blocks(b.narrow, False))
        return b

    def blocks(bs: tuple[Block, ...], count: bool = True) -> tuple[Block, ...]:
        return tuple(block(b, count) for b in bs)

    return dataclasses.replace(document, blocks=blocks(document.blocks)), left_out
