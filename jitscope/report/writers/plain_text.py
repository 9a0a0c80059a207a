"""Piped text without rich: a document exactly as the colourless stdout console prints it, byte for byte.

``jitscope trace ... > file`` (CI logs, benchmarks) paid ~20 ms to import rich.console and rich.table,
and more to render through them, for text with no colour to show. ``render_piped`` lays out the same
rules, tables, wrapped prose and listings as ``terminal.render_rich`` printed on ``console.make_console()``
when stdout is not a terminal (100 columns, soft wrap: long lines are never folded), following rich's own
algorithms (``rich/rule.py``, ``table.py``, ``text.py``, ``_wrap.py``).

The layout itself is ``plain_layout.py``. Where it cannot be sure to match rich, ``render_piped`` returns
None and the caller prints through rich as before: a character other than a plain one-cell one in text
rich measures (wide CJK, combining marks, emoji), tabs and the control characters rich strips, markup in a
column's name, a log-log chart.
``tests/report/test_plain_text.py`` compares the two on real reports and random documents.

Nothing here imports rich; the module is imported only where piped text is written.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from jitscope.report.views.document import (
    Block,
    Cell,
    Chart,
    CodeListing,
    Document,
    Fit,
    KeyValues,
    Note,
    Panels,
    Paragraph,
    Section,
    Table,
    plain,
    tables_in,
)
from jitscope.report.writers.console import PIPE_WIDTH, may_be_terminal
from jitscope.report.writers.listings import listing_lines, timeline_table
from jitscope.report.writers.plain_layout import Unsure, cells, natural_width, rule, table, text_lines, wrap

WIDTH = PIPE_WIDTH
#: Set (to anything) to print piped text through rich, as before this writer: for debugging and tests.
ESCAPE_HATCH = "JITSCOPE_NO_FAST_PATH"


def enabled() -> bool:
    """Whether text may be laid out here at all (the escape hatch unset): piped stdout and text files alike."""
    return not os.environ.get(ESCAPE_HATCH)


def piped_stdout() -> bool:
    """True when ``make_console()`` on stdout would be the plain piped console this module reproduces: not a
    terminal, no colour forced, UTF-8 (rich draws rules in ``-`` otherwise), not a notebook, not Windows."""
    stream = sys.stdout
    if (stream is None or not enabled() or sys.platform == "win32"
            or hasattr(stream, "rich_proxied_file")):  # rich's own redirect (a live display) is active
        return False
    if may_be_terminal(stream):  # a terminal, or colour forced (TERM=dumb: rich may size it otherwise)
        return False
    if not (getattr(stream, "encoding", "utf-8") or "utf-8").lower().startswith("utf"):
        return False
    import builtins

    # rich's Console decides it is in a notebook from IPython's get_ipython (console._is_jupyter); where
    # IPython runs at all, leave that decision to rich.
    return getattr(builtins, "get_ipython", None) is None


def write_piped(text: str) -> None:
    """``text`` on stdout as rich's console writes it: one write, a flush, and on a closed pipe (``| head``)
    the same quiet exit 1 as rich's ``Console.on_broken_pipe``."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(1) from None


def render_piped(document: Document) -> str | None:
    """The document as the piped console prints ``render_rich(document)``, or None where that is not certain."""
    try:
        lines = _document(document)
    except Unsure:
        return None
    return "".join([line + "\n" for line in lines])


def _document(document: Document) -> list[str]:
    out: list[str] = []
    pages = [b for b in document.blocks if isinstance(b, Section) and b.level <= 1]
    if document.title and not (len(pages) == 1 and document.title.endswith(pages[0].title)):
        out += _title_rule(document.title)
        if document.subtitle:
            out += wrap(document.subtitle, WIDTH)
    return out + _spaced([_block(block) for block in document.blocks])


def _spaced(parts: list[list[str]]) -> list[str]:
    out: list[str] = []
    for i, part in enumerate(parts):
        out += ["", *part] if i else part
    return out


def _block(block: Block) -> list[str]:
    """``terminal.render_block``'s lines."""
    if isinstance(block, Section):
        return _section(block)
    if isinstance(block, Paragraph):
        text = plain(block.text)
        if block.preformatted:
            parts = text.split("\n")
            if len(parts) > 1 and not parts[-1]:
                parts.pop()  # rich's Text.split drops the empty line after a last newline
            text = "\n".join(["  " + part for part in parts])
        return wrap(text, WIDTH) if block.wrap else text_lines(text)
    if isinstance(block, Note):
        text = (f"{block.label}: " if block.label else "") + block.text
        return wrap(text, WIDTH) if block.wrap else text_lines(text)
    if isinstance(block, KeyValues):
        return table(_grid(("", ""), block.rows, False), ("left", "right"), False, WIDTH)
    if isinstance(block, Table):
        title = text_lines(block.title) if block.title else []
        return title + table(_cells_of(block), [c.align for c in block.columns], block.show_header, WIDTH)
    if isinstance(block, CodeListing):
        return _listing(block)
    if isinstance(block, Panels):
        return _spaced([_block(b) for b in block.blocks])
    if isinstance(block, Chart):
        if block.kind == "loglog":
            raise Unsure
        return _block(timeline_table(block)) if block.kind == "timeline" else []
    if isinstance(block, Fit):
        too_wide = any(natural_width(_cells_of(t), len(t.columns)) > WIDTH for t in tables_in(block.blocks))
        return _spaced([_block(b) for b in (block.narrow if too_wide else block.blocks)])
    raise Unsure  # not a view block: rich raises its TypeError


def _section(section: Section) -> list[str]:
    if not section.title:  # a plain group
        return [line for block in section.blocks for line in _block(block)]
    if section.level <= 1:
        out = _title_rule(section.title)
    else:
        out = [rule(section.title + (f"  {section.note}" if section.note else ""), "─", WIDTH)]
    if section.gap:
        out.append("")
    for i, block in enumerate(section.blocks):
        if isinstance(block, Section) and (i or not section.gap):
            out.append("")
        out += _block(block)
    return out


def _listing(listing: CodeListing) -> list[str]:
    """``terminal._listing``: the raw text's lines, or ``listing_lines`` at the console's width."""
    if listing.raw is not None and not any(line.note or line.number for line in listing.lines):
        return listing.raw.removesuffix("\n").split("\n")
    return ["".join([text for text, _ in line]) for line in listing_lines(listing, WIDTH)]


def _title_rule(title: str) -> list[str]:
    """``terminal._TitleRule``: a heavy rule titled on its left, or the title wrapped above a bare one."""
    if "\n" in title:
        raise Unsure  # rich measures a newline as no cell, then draws it as a space
    if cells(title) + 4 <= WIDTH:
        return [rule(title, "━", WIDTH)]
    return [*wrap(title, WIDTH), "━" * WIDTH]


def _cells_of(block: Table) -> list[list[str]]:
    return _grid([column.name for column in block.columns], block.rows, block.show_header)


def _grid(header: Sequence[str], rows: Sequence[Sequence[Cell]], show_header: bool) -> list[list[str]]:
    """A table's cells as plain text, its header first when shown."""
    if show_header and any("[" in name for name in header):
        raise Unsure  # rich reads a column's name as markup
    grid = [list(header)] if show_header else []
    for row in rows:
        if len(row) > len(header):
            raise Unsure  # rich adds columns
        texts = [cell if isinstance(cell, str) else plain(cell) for cell in row]
        grid.append(texts + [""] * (len(header) - len(texts)))
    return grid
