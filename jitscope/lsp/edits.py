"""What the server's code actions change, and positions in the units the editor counts.

Findings count columns in characters (code points); LSP clients count UTF-16 code units unless they
negotiated UTF-8 or UTF-32 (``general.positionEncodings``), so every column crosses
:func:`to_client` / :func:`from_client` on its way out or in.

A suppression comment is the linter's own syntax (:mod:`jitscope.linter.suppression`):
``# jitscope: ignore[JS101]`` at the end of the finding's first line, or its last line where the first
cannot take a comment (it ends inside a string, or with a backslash). An existing
``# jitscope: ignore[...]`` on that line gets the code added to its list. An edit is offered only when
the file's syntax tree is unchanged by it (the comment is a comment) and the line then suppresses the
code, both checked here.
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


def suppression_edit(finding: Finding, text: str) -> LineEdit | None:
    """The edit that adds ``finding``'s code to a suppression comment, or None where no line can take one."""
    lines = split_lines(text)
    try:
        before = ast.dump(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # a file that does not parse has only its JS000, which no comment suppresses
    for number in dict.fromkeys((finding.line, finding.end_line)):
        if not 1 <= number <= len(lines):
            continue
        edit = _comment_edit(lines[number - 1], number - 1, finding.code)
        edited = apply(edit, lines)
        if is_suppressed(finding, edited) and _same_tree("\n".join(edited), before):
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


def _same_tree(edited: str, before: str) -> bool:
    """The edited file parses to the same tree: the text added is a comment, not part of a string."""
    try:
        return ast.dump(ast.parse(edited)) == before
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
