"""Listings as plain lines of styled pieces: line numbers in front, notes aligned at the end.

Shared by the terminal and Markdown back ends; imports nothing but the view model.
"""

from __future__ import annotations

from jitscope.report.views.document import Chart, CodeLine, CodeListing, Column, Piece, Table
from jitscope.units import fmt_duration

#: Notes after a jaxpr equation line up at this column at most.
MAX_NOTE_COLUMN = 80


def _width(line: list[Piece]) -> int:
    return sum(len(text) for text, _ in line)


def listing_lines(listing: CodeListing, width: int = 100) -> list[list[Piece]]:
    """The listing's lines with ``> 12 │ `` numbers (``>`` marks a line), notes on one column, carets
    under an underlined span, and the listing's indent."""
    if not listing.lines and listing.raw is not None:
        return [[(line, "")] if line else [] for line in listing.raw.removesuffix("\n").split("\n")]
    lines = listing.lines
    digits = max((len(str(line.number)) for line in lines if line.number is not None), default=0)
    out: list[list[Piece]] = []
    for line in lines:
        pieces: list[Piece] = []
        if digits:
            number = "" if line.number is None else str(line.number)
            pieces.append((f"{'>' if line.mark else ' '} {number:>{digits}} │ ", "jitscope.muted"))
        pieces.extend(line.text)
        out.append(pieces)
    notes = [line.note for line in lines]
    if any(notes):
        widths = [_width(p) if note else 0 for p, note in zip(out, notes, strict=True)]
        longest = max(len(note) for note in notes if note)
        column = max(min(max(widths), MAX_NOTE_COLUMN, width - longest - 2), 0)
        out = [[*p, (" " * max(column - w, 0) + "  ", ""), (note, "jaxpr.location")] if note else p
               for p, note, w in zip(out, notes, widths, strict=True)]
    if any(line.underline for line in lines):
        out = [part for p, line in zip(out, lines, strict=True) for part in (p, *_carets(line, digits))]
    if listing.indent:
        out = [[(" " * listing.indent, ""), *p] if p else p for p in out]
    return out


def _carets(line: CodeLine, digits: int) -> list[list[Piece]]:
    """``   │    ^^^^`` under the line's underlined span (none when it has none)."""
    if line.underline is None:
        return []
    start, end = line.underline
    gutter: list[Piece] = [(f"  {'':>{digits}} │ ", "jitscope.muted")] if digits else []
    return [[*gutter, (" " * max(start, 0), ""), ("^" * max(end - start, 1), line.underline_style)]]


def listing_text(listing: CodeListing) -> str:
    """The listing as plain text, one trailing newline."""
    if not listing.lines and listing.raw is not None:
        return listing.raw if listing.raw.endswith("\n") else listing.raw + "\n"
    return "".join("".join(text for text, _ in line) + "\n" for line in listing_lines(listing))


def timeline_table(chart: Chart) -> Table:
    """A ``timeline`` chart as a table, one row per span in order of start (quiet spans left out), named
    by its label (its title when it has none)."""
    spans = sorted((s for s in chart.spans if not s.quiet), key=lambda s: s.start)
    columns = (Column("at", "right"), Column(chart.y_label or "lane"),
               *(Column(series.name, "right") for series in chart.series), Column(""))
    rows = tuple((fmt_duration(span.start), chart.categories[span.lane],
                  *(fmt_duration(length) if length > 0 else "" for length in span.lengths),
                  span.label or span.title) for span in spans)
    return Table(columns, rows, title=chart.title)
