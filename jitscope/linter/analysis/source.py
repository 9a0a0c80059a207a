"""Reading a Python file for linting: what is read, size limit, encoding, parsing, positions.

Everything that can go wrong with a file (too big, undecodable, not Python) becomes a
JS000 finding instead of an exception, so one bad file never stops a lint run. Only
regular files are opened (a FIFO would block, ``/dev/zero`` never ends), and never more
than ``MAX_FILE_BYTES`` of one is read. Bytes are decoded as the interpreter reads a
module: a UTF-8 BOM, a PEP 263 coding cookie on line 1 or 2, universal newlines (CR and
CRLF line ends become LF, so line numbers are the interpreter's).
"""

from __future__ import annotations

import ast
import bisect
import os
import re
import stat
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from jitscope.inputs import NotRegularFile, file_kind, open_regular
from jitscope.model.lint import Finding

#: Files larger than this are reported (JS000) instead of parsed: generated code, data.
MAX_FILE_BYTES = 4_000_000

JS000_CODE = "JS000"
JS000_NAME = "unparsable-file"

_EOL = re.compile(rb"\r\n|\r|\n")
_WORD_CHAR = re.compile(r"\w")


@dataclass(frozen=True, slots=True)
class NotRegular:
    """A path that is not a regular file (or a link to one): never opened for reading."""

    reason: str


def source_size(path: str) -> int | NotRegular:
    """The size of ``path``, or why it must not be read as source (a FIFO, a device, a socket, a broken link)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return NotRegular("a broken symbolic link" if os.path.islink(path) else "it no longer exists")
    except OSError:
        return 0  # reading it will say why (permission denied...)
    if stat.S_ISREG(info.st_mode):
        return info.st_size
    what = file_kind(info.st_mode)
    if os.path.islink(path):
        return NotRegular(f"a symbolic link to {what} ({os.path.realpath(path)}), not a regular file")
    return NotRegular(f"{what}, not a regular file")


def read_source_bytes(path: str, display: str) -> bytes | Finding | NotRegular:
    """At most ``MAX_FILE_BYTES`` of a regular file; a JS000 finding when it cannot be read or is too large.

    Opened by ``inputs.open_regular``: without blocking, and checked on the open descriptor, so a file
    replaced by a FIFO or a device since the directory was walked is still never read.
    """
    limit = MAX_FILE_BYTES
    try:
        fd = open_regular(path)
    except NotRegularFile as err:
        return NotRegular(f"{err.kind}, not a regular file")
    except OSError as err:
        return file_finding(display, f"file cannot be read: {err.strerror or err}", certain=False)
    with open(fd, "rb", closefd=True) as fh:
        try:
            info = os.fstat(fd)
            if info.st_size > limit:
                return too_large(display, info.st_size)
            data = fh.read(limit + 1)
        except OSError as err:
            return file_finding(display, f"file cannot be read: {err.strerror or err}", certain=False)
    return too_large(display, None) if len(data) > limit else data


def too_large(path: str, size: int | None) -> Finding:
    limit = MAX_FILE_BYTES
    bytes_ = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    return file_finding(path, f"file is too large to lint ({bytes_} > {limit:,}); it was skipped", certain=False)


def source_lines(path: str) -> list[str]:
    """The decoded lines of a source file (for suppression comments); empty when it cannot be read."""
    data = read_source_bytes(path, path)
    if not isinstance(data, bytes):
        return []
    try:
        return split_lines(decode(data))
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return split_lines(data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n"))


def split_lines(text: str) -> list[str]:
    """Lines as the interpreter numbers them: split on LF only (not on form feeds or U+2028 as
    ``str.splitlines`` does), the text's newlines already universal."""
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    return lines


class ParsedSource:
    """A decoded, parsed file. ``lines`` is split on first use: most files never need it."""

    __slots__ = ("_columns", "_lines", "path", "text", "tree")

    def __init__(self, path: str, text: str, tree: ast.Module) -> None:
        self.path = path
        self.text = text
        self.tree = tree
        self._lines: list[str] | None = None
        self._columns: dict[int, _NonAscii | None] = {}

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def char_column(self, line: int, byte_offset: int) -> int:
        """An AST column (a UTF-8 byte offset) on 1-based line ``line`` as a character offset (``byte_offset``
        itself past the last line): O(log n) after one pass over the line, so the findings on a generated
        1 MB line do not each scan it."""
        if not 1 <= line <= len(self.lines):
            return byte_offset
        if line not in self._columns:
            text = self.lines[line - 1]
            self._columns[line] = None if text.isascii() else _NonAscii(text)
        table = self._columns[line]
        return byte_offset if table is None else table.char_column(byte_offset)

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
    """Decode source bytes like the interpreter does (BOM, PEP 263 coding cookie, universal newlines).

    Raises ``SyntaxError`` for a bad cookie (as ``tokenize.detect_encoding``), ``UnicodeDecodeError``.
    """
    head, pos = [], 0
    for _ in range(2):  # the cookie may only be on line 1 or 2; a lone CR ends a line too
        m = _EOL.search(data, pos)
        end = m.end() if m else len(data)
        head.append(data[pos:end])
        pos = end
    lines = iter(head)
    encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    text = data.decode(encoding)  # utf-8-sig drops the BOM
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def parse_source(path: str, data: bytes) -> ParsedSource | Finding:
    """Decode and parse one file, or return the JS000 finding that explains why not."""
    if len(data) > MAX_FILE_BYTES:
        return too_large(path, len(data))
    try:
        text = decode(data)
    except SyntaxError as err:  # a coding cookie naming no codec, a BOM with another cookie, ...
        return file_finding(path, f"file cannot be decoded: {err.msg}")
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
    except (RecursionError, MemoryError) as err:  # the parser's limit on nesting (its message may be empty)
        return file_finding(path, f"file is nested too deeply for Python's parser ({type(err).__name__})",
                            certain=False)
    return ParsedSource(path, text, tree)


def match_lines(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """Each match of ``pattern`` in ``text`` with its 1-based line number (counted as the scan goes)."""
    line, last = 1, 0
    for m in pattern.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        yield line, m


def word_start_lines(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """:func:`match_lines` for a pattern that would start with ``\\b`` and a word, written without the
    ``\\b``: matches that start inside a longer word are dropped here. Python's regex engine scans
    for a pattern's possible first characters at C speed only when it starts with them (a leading
    ``\\b`` or lookahead makes it try the pattern at every position). Exact for patterns whose
    matches start with a word character and whose other word characters all come first: a dropped
    match then covers only the tail of a word and what follows it, where no kept match could start.
    """
    for line, m in match_lines(pattern, text):
        start = m.start()
        if not (start and _WORD_CHAR.match(text, start - 1)):
            yield line, m


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


class _NonAscii:
    """Byte offset -> character offset on one line, from where its non-ASCII characters start (in bytes)
    and how many bytes more than characters the line has up to the end of each."""

    __slots__ = ("extra", "starts")

    def __init__(self, line: str) -> None:
        self.starts: list[int] = []
        self.extra: list[int] = []
        extra = 0
        for m in _NON_ASCII.finditer(line):
            self.starts.append(m.start() + extra)
            extra += len(m.group().encode("utf-8", errors="surrogatepass")) - 1
            self.extra.append(extra)

    def char_column(self, byte_offset: int) -> int:
        before = bisect.bisect_left(self.starts, byte_offset)  # the non-ASCII characters before the offset
        return byte_offset - (self.extra[before - 1] if before else 0)
