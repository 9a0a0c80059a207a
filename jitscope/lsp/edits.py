"""What the server's code actions change, and positions in the units the editor counts.

Findings count columns in characters (code points); LSP clients count UTF-16 code units unless they
negotiated UTF-8 or UTF-32 (``general.positionEncodings``), so every column crosses
:func:`to_client` / :func:`from_client` on its way out or in.

A suppression comment is the linter's own syntax (:mod:`jitscope.linter.suppression`):
``# jitscope: ignore[JS101]`` at the end of the finding's first line, or its last line where the first
cannot take a comment (it ends inside a string literal, by the file's syntax tree, or with a
backslash). An existing ``# jitscope: ignore[...]`` on that line gets the code added to its list. An
edit is offered only where the edited line then suppresses the code (checked with the engine's own
:func:`~jitscope.linter.suppression.is_suppressed`); the tests check that the syntax tree is unchanged.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from jitscope.linter.suppression import is_suppressed
from jitscope.model.lint import Finding

_BRACKETED = re.compile(r"#\s*jitscope\s*:\s*ignore\s*\[([^\]]*)\]", re.IGNORECASE)
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class LineEdit:
    """Replace characters ``start:end`` (code points, 0-based) of line ``line`` (0-based) with ``text``."""

    line: int
    start: int
    end: int
    text: str


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as LSP numbers them (LF, CRLF and a lone CR each end a line)."""
    return _LINE_END.split(text)


def newline_of(text: str) -> str:
    """The text's own line end (that of its first line; LF for a single line)."""
    found = _LINE_END.search(text)
    return found.group() if found else "\n"


def to_client(line: str, column: int, encoding: str) -> int:
    """Code-point column ``column`` of ``line`` in the client's units (``utf-8``, ``utf-16``, ``utf-32``)."""
    head = line[:column]
    if encoding == "utf-32" or head.isascii():
        return len(head)
    if encoding == "utf-8":
        return len(head.encode("utf-8", errors="surrogatepass"))
    return len(head) + sum(1 for char in head if ord(char) > 0xFFFF)


def from_client(line: str, units: int, encoding: str) -> int:
    """The code-point column at ``units`` client units into ``line`` (clamped to the line)."""
    if encoding == "utf-32" or line.isascii():
        return min(units, len(line))
    counted = 0
    for index, char in enumerate(line):
        if counted >= units:
            return index
        if encoding == "utf-8":
            counted += len(char.encode("utf-8", errors="surrogatepass"))
        else:
            counted += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def lines_ending_in_strings(text: str) -> frozenset[int] | None:
    """1-based numbers of the lines whose end lies inside a string literal (a comment added there would be
    part of the string); None when ``text`` does not parse. One parse: an editor asks for code actions on
    every cursor move, so the server keeps this per version of the buffer."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and (node.end_lineno or node.lineno) > node.lineno:
            inside.update(range(node.lineno, node.end_lineno or node.lineno))
    return frozenset(inside)


def suppression_edit(finding: Finding, text: str, in_strings: frozenset[int] | None = None) -> LineEdit | None:
    """The edit that adds ``finding``'s code to a suppression comment, or None where no line can take one.

    ``in_strings`` is :func:`lines_ending_in_strings` of ``text`` (computed here when not given).
    """
    if in_strings is None:
        in_strings = lines_ending_in_strings(text)
        if in_strings is None:
            return None  # a file that does not parse has only its JS000, which no comment suppresses
    lines = split_lines(text)
    for number in dict.fromkeys((finding.line, finding.end_line)):
        if not 1 <= number <= len(lines) or number in in_strings or lines[number - 1].rstrip().endswith("\\"):
            continue
        edit = _comment_edit(lines[number - 1], number - 1, finding.code)
        if is_suppressed(finding, apply(edit, lines)):
            return edit
    return None


def _comment_edit(line: str, index: int, code: str) -> LineEdit:
    existing = _BRACKETED.search(line)
    if existing is not None:
        listed = existing.group(1).strip()
        start, end = existing.span(1)
        return LineEdit(index, start, end, f"{listed}, {code}" if listed else code)
    code_end = len(line.rstrip())
    return LineEdit(index, code_end, len(line), f"  # jitscope: ignore[{code}]")


def apply(edit: LineEdit, lines: list[str]) -> list[str]:
    """``lines`` with ``edit`` made."""
    line = lines[edit.line]
    return [*lines[: edit.line], line[: edit.start] + edit.text + line[edit.end:], *lines[edit.line + 1:]]
