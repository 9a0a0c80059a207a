"""rich's layout of plain text, re-done without rich: left-titled rules, word wrap, and tables with no box.

Each function follows the rich code named in its docstring (rich 15: ``rule.py``, ``text.py``,
``_wrap.py``, ``table.py``, ``_ratio.py``) for text whose every character takes one terminal cell, and
raises ``Unsure`` wherever it does not know rich's answer for certain (``plain_text.py`` then prints
through rich). Styles are left out: the piped console shows none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

#: Characters rich measures as one cell without a look-up: its own ``cells._SINGLE_CELL_UNICODE_RANGES``
#: and a few blocks reports use ("…", "⋮", "→", "↳", "−", "≈" ...), each checked against
#: ``rich.cells.cell_len`` by tests/report/test_plain_text.py.
_RANGES = ((0x20, 0x7E), (0xA0, 0xAC), (0xAE, 0x2FF), (0x370, 0x482), (0x2500, 0x25FC), (0x2800, 0x28FF),
           (0x2010, 0x2027), (0x2030, 0x205E), (0x2190, 0x21FF), (0x2200, 0x22FF))
NARROW = frozenset(chr(c) for start, end in _RANGES for c in range(start, end + 1))
#: What rich's ``Text`` changes in what it prints: tabs (expanded) and the control codes it strips.
_ALTERED = frozenset("\t\x07\x08\x0b\x0c\r")
#: ``rich._wrap.re_word``: a word with the white space after (and, first in a line, before) it.
_WORD = re.compile(r"\s*\S+\s*")
_TRAILING_SPACE = re.compile(r"\s+$")


class Unsure(Exception):
    """rich's output is not reproduced for certain: the caller prints through rich."""


def cells(line: str) -> int:
    """Terminal cells of one line of text in which every character is one cell wide (else ``Unsure``)."""
    if line.isascii() and line.isprintable() or NARROW.issuperset(line):
        return len(line)
    raise Unsure


def text_lines(text: str) -> list[str]:
    """The lines of a ``Text`` rich prints as it is (``Text.split``, with tabs and stripped codes refused)."""
    if not text.isprintable() and not _ALTERED.isdisjoint(text):
        raise Unsure
    return text.split("\n")


def rule(title: str, character: str, width: int) -> str:
    """``rich.rule.Rule(title, characters=character, align="left")``: the title cut with "…" where it would
    leave under 2 cells of line."""
    if "\n" in title:
        raise Unsure  # rich draws it as a space but may have measured it as no cell (``terminal._TitleRule``)
    size = cells(title)
    if size > width - 2:
        title, size = title[:width - 3] + "…", width - 2
    return f"{title} {character * (width - size - 1)}"


def divide_line(text: str, width: int, fold: bool) -> list[int]:
    """Where rich breaks a line (``rich._wrap.divide_line``); ``fold``: a word longer than a line is cut into
    pieces of the width (else it stays whole, for the caller to crop)."""
    breaks: list[int] = []
    offset = 0
    word = _WORD.match(text)
    while word is not None:
        start, end = word.span()
        length = len(word.group().rstrip())
        if width - offset >= length:
            offset += end - start
        elif length > width:
            pieces = range(start, end, width) if fold else range(start, start + 1)
            breaks += [piece for piece in pieces if piece]
            offset = end - pieces[-1]
        elif offset and start:
            breaks.append(start)
            offset = end - start
        word = _WORD.match(text, end)
    return breaks


def _rstrip_end(piece: str, width: int) -> str:
    """``Text.rstrip_end``: white space past the width goes first."""
    if len(piece) > width:
        space = _TRAILING_SPACE.search(piece)
        if space is not None:
            return piece[:len(piece) - min(len(space.group()), len(piece) - width)]
    return piece


def wrap(text: str, width: int) -> list[str]:
    """``Text.wrap(console, width)`` (words longer than a line folded), each line stripped at its end, as
    ``terminal._Wrapped`` prints prose."""
    out: list[str] = []
    for line in text_lines(text):
        cells(line)
        for start, end in pairwise([0, *divide_line(line, width, True), len(line)]):
            out.append(_rstrip_end(line[start:end], width)[:width].rstrip())
    return out


def _fit_cell(text: str, width: int, justify: str) -> list[str]:
    """A table cell's ``Text.wrap(console, width, justify=..., overflow="ellipsis")``: words longer than the
    width cut with "…", each line padded to the width."""
    out: list[str] = []
    for line in text.split("\n"):
        for start, end in pairwise([0, *divide_line(line, width, False), len(line)]):
            piece = _rstrip_end(line[start:end], width)
            if justify == "right":
                piece = piece.rstrip()
            if len(piece) > width:
                piece = piece[:width - 1] + "…"
            out.append(piece.ljust(width) if justify != "right" else piece.rjust(width))
    return out


# -- tables: rich's Table(box=None, pad_edge=False), one space each side between columns --------------------


def _padding(index: int, count: int) -> tuple[int, int]:
    """Spaces left and right of a column's cells: one between columns, none at the table's edges."""
    return (0 if index == 0 else 1), (0 if index == count - 1 else 1)


def _cell_widths(grid: list[list[str]], count: int) -> list[list[int]]:
    """Each column's cells' widest lines (every line checked to be one-cell text)."""
    return [[max(cells(line) for line in text_lines(row[i])) for row in grid] for i in range(count)]


def _column_width(widest: list[int], pad: int, limit: int) -> int:
    """``Table._measure_column(...).maximum`` at ``limit`` cells: a ``Padding(Text)`` per cell."""
    if limit < 1:
        return 0
    if limit - pad < 1:
        return limit
    return max(width if (width := min(min(text, limit) + pad, limit)) >= 1 else 0 for text in widest)


def natural_width(grid: list[list[str]], count: int) -> int:
    """The table's width with no limit: ``Measurement.get(...).maximum`` in ``terminal._FitView``."""
    if not count:
        return 0
    if not grid:
        raise Unsure  # rich measures a column with no cells as wide as it may be
    widths = [_column_width(widest, sum(_padding(i, count)), 10_000)
              for i, widest in enumerate(_cell_widths(grid, count))]
    if sum(widths) > 10_000:
        raise Unsure
    return sum(widths)


def _ratio_reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]) -> list[int]:
    """``rich._ratio.ratio_reduce``."""
    ratios = [ratio if most else 0 for ratio, most in zip(ratios, maximums, strict=True)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return values[:]
    remaining = total
    result = []
    for ratio, most, value in zip(ratios, maximums, values, strict=True):
        if ratio and total_ratio > 0:
            distributed = min(most, round(ratio * remaining / total_ratio))
            result.append(value - distributed)
            remaining -= distributed
            total_ratio -= ratio
        else:
            result.append(value)
    return result


def _collapse(widths: list[int], limit: int) -> list[int]:
    """``Table._collapse_widths`` (every column may wrap) and its last resort, columns reduced evenly."""
    excess = sum(widths) - limit
    while sum(widths) and excess > 0:
        widest = max(widths)
        second = max(width if width != widest else 0 for width in widths)
        if not widest - second:
            break
        widths = _ratio_reduce(excess, [int(width == widest) for width in widths],
                               [min(excess, widest - second)] * len(widths), widths)
        excess = sum(widths) - limit
    if sum(widths) > limit:
        widths = _ratio_reduce(sum(widths) - limit, [1] * len(widths), widths, widths)
    return widths


def table(grid: list[list[str]], justify: Sequence[str], header: bool, limit: int) -> list[str]:
    """``grid``'s rows as rich lays out a table ``limit`` cells wide at most, trailing spaces and all: each
    column as wide as its widest cell, the widest columns narrowed (cells wrapped) when the table is too
    wide. ``header``: the first row is the header, aligned to its bottom."""
    count = len(justify)
    if not count:
        return [""]
    if not grid:
        return []
    widest = _cell_widths(grid, count)
    widths = [_column_width(w, sum(_padding(i, count)), limit) or 1 for i, w in enumerate(widest)]
    if sum(widths) > limit:
        widths = [_column_width(w, sum(_padding(i, count)), width)
                  for i, (w, width) in enumerate(zip(widest, _collapse(widths, limit), strict=True))]
    out: list[str] = []
    for r, row in enumerate(grid):
        lines: list[list[str]] = []
        for i, (text, width) in enumerate(zip(row, widths, strict=True)):
            left, right = _padding(i, count)
            inner = width - left - right  # rich renders nothing under 1 cell
            lines.append([" " * left + line + " " * right for line in _fit_cell(text, inner, justify[i])]
                         if inner >= 1 else [])
        height = max(1, *map(len, lines))
        for i, cell in enumerate(lines):
            blank = [" " * widths[i]] * (height - len(cell))
            lines[i] = blank + cell if header and not r else cell + blank
        out += ["".join(parts) for parts in zip(*lines, strict=True)]
    return out
