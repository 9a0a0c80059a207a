"""Reading a Python file for linting: size limit, encoding, parsing, positions.

Everything that can go wrong with a file (too big, undecodable, not Python) becomes a
JS000 finding instead of an exception, so one bad file never stops a lint run.
"""

from __future__ import annotations

import ast
import codecs
import re
from collections.abc import Iterator

from jitscope.model.lint import Finding

#: Files larger than this are reported (JS000) instead of parsed: generated code, data.
MAX_FILE_BYTES = 4_000_000

JS000_CODE = "JS000"
JS000_NAME = "unparsable-file"

_CODING_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class ParsedSource:
    """A decoded, parsed file. ``lines`` is split on first use: most files never need it."""

    __slots__ = ("_lines", "path", "text", "tree")

    def __init__(self, path: str, text: str, tree: ast.Module) -> None:
        self.path = path
        self.text = text
        self.tree = tree
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines

    @property
    def line_count(self) -> int:
        text = self.text
        return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def file_finding(path: str, message: str, line: int = 1, column: int = 1, end_column: int = 0, *,
                 certain: bool = True) -> Finding:
    """A JS000 finding for a file that could not be linted: an error when the file itself is broken (Python
    could not import it either), a warning when only jitscope could not check it (too large, too deeply
    nested, unreadable here, an internal error)."""
    return Finding(
        code=JS000_CODE,
        name=JS000_NAME,
        message=message,
        severity="error" if certain else "warning",
        file=path,
        line=max(line, 1),
        column=max(column, 1),
        end_line=max(line, 1),
        end_column=max(end_column, column, 1),
        function="<module>",
        suggestion="",
    )


def decode(data: bytes) -> str:
    """Decode source bytes like the interpreter does (BOM, PEP 263 coding cookie, utf-8)."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8")
    encoding = "utf-8"
    # The cookie may only be on line 1 or 2.
    first, _, rest = data.partition(b"\n")
    for candidate in (first, rest.partition(b"\n")[0]):
        m = _CODING_RE.match(candidate)
        if m:
            encoding = m.group(1).decode("ascii")
            break
        if candidate.strip() and not candidate.lstrip().startswith(b"#"):
            break
    return data.decode(encoding)


def parse_source(path: str, data: bytes) -> ParsedSource | Finding:
    """Decode and parse one file, or return the JS000 finding that explains why not."""
    if len(data) > MAX_FILE_BYTES:
        return file_finding(
            path, f"file is too large to lint ({len(data):,} bytes > {MAX_FILE_BYTES:,}); it was skipped",
            certain=False,
        )
    try:
        text = decode(data)
    except (UnicodeDecodeError, LookupError) as err:
        return file_finding(path, f"file cannot be decoded: {err}")
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as err:
        line = err.lineno or 1
        col = err.offset or 1
        return file_finding(path, f"syntax error: {err.msg}", line, col, col + 1)
    except ValueError as err:  # null bytes: the interpreter refuses the file too
        return file_finding(path, f"file cannot be parsed: {type(err).__name__}: {err}")
    except (RecursionError, MemoryError) as err:
        return file_finding(path, f"file cannot be parsed: {type(err).__name__}: {err}", certain=False)
    return ParsedSource(path, text, tree)


def match_lines(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """Each match of ``pattern`` in ``text`` with its 1-based line number (counted as the scan goes)."""
    line, last = 1, 0
    for m in pattern.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        yield line, m


def char_column(line: str, byte_offset: int) -> int:
    """Convert an AST column (a UTF-8 byte offset) into a character offset on ``line``."""
    if line.isascii():
        return byte_offset
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace"))
