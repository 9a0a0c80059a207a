"""Every file jitscope reads that the user named: a regular file, read whole up to a size bound.

A baseline (``bench --compare``), a capture (``--from DIR``), a per-process report (``merge``) or a
compile baseline (pytest ``--jitscope-compare``) is read by ``read_input``. Anything that is not a
regular file is refused before it is read, with one line and exit 2: a FIFO would block until a
writer came, ``/dev/zero`` never ends, a terminal waits for typing (issue 30). The path is checked
with ``stat`` before it is opened, opened without blocking (``O_NONBLOCK``: opening a FIFO never
waits), and checked again on the open descriptor, so a file swapped for a FIFO in between is
still never read. At most ``limit`` bytes are read: a larger file is refused, not loaded.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import Any, TypeVar

from jitscope.errors import UsageError

T = TypeVar("T")

#: The most a saved jitscope document may hold: a large model's run report, all compiles' HLO kept.
MAX_REPORT_BYTES = 512 * 1024 * 1024

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def file_kind(mode: int) -> str:
    """``a FIFO``, ``a character device``...: what a ``st_mode`` that is no regular file is."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


class NotRegularFile(UsageError):
    """A path the user named as a file to read is a FIFO, a device, a socket or a directory (``kind`` says)."""

    def __init__(self, message: str, *, kind: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind


def open_regular(path: str | os.PathLike[str]) -> int:
    """A descriptor open for reading on the regular file ``path`` (a link to one is followed).

    Raises ``NotRegularFile`` (naming what it is) for anything else, before it is opened and again on
    the descriptor; ``OSError`` (``FileNotFoundError``...) when it cannot be opened.
    """
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode)
    fd = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _not_regular(path: str | os.PathLike[str], mode: int) -> NotRegularFile:
    link = f" (a link to {os.path.realpath(path)})" if os.path.islink(path) else ""
    kind = file_kind(mode)
    return NotRegularFile(f"{os.fspath(path)}{link} is {kind}, not a regular file: jitscope did not read it",
                          kind=kind, hint="name a file that jitscope wrote")


def read_input(path: str | os.PathLike[str], what: str, *, limit: int = MAX_REPORT_BYTES,
               shown: str | os.PathLike[str] | None = None) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``), or one ``UsageError`` line naming ``what`` it
    was meant to be (``baseline``, ``capture``, ``run report``), the file (as ``shown``, default ``path``) and
    why it was not read."""
    shown = os.fspath(path if shown is None else shown)
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        link = " (a broken symbolic link)" if os.path.islink(path) else ""
        raise UsageError(f"cannot read {what} {shown}: no such file{link}") from None
    except NotRegularFile as exc:
        raise NotRegularFile(f"{what} {shown}{exc.message[len(os.fspath(path)):]}", kind=exc.kind,
                             hint=exc.hint) from None
    except OSError as exc:
        raise UsageError(f"cannot read {what} {shown}: {exc.strerror or exc}") from None
    with open(fd, "rb", closefd=True) as handle:
        try:
            size = os.fstat(fd).st_size
            data = handle.read(limit + 1) if size <= limit else b""
        except OSError as exc:
            raise UsageError(f"cannot read {what} {shown}: {exc.strerror or exc}") from None
    if size > limit or len(data) > limit:
        raise UsageError(f"{what} {shown} is larger than {_size(limit)}: not a document jitscope wrote",
                         hint="name the file jitscope wrote")
    return data


def _size(n: int) -> str:
    return f"{n // 2**20:,} MiB" if n >= 2**20 else f"{n:,} bytes"


#: How deep a saved document may nest lists and objects. jitscope's own documents stay under 20 levels (a
#: capture's argument pytrees add their own); deeper is a tampered file, refused before anything walks it.
MAX_DEPTH = 200


class NotJson(UsageError):
    """A file named as a saved document is not UTF-8 JSON text at all (one cut short, or some other file)."""


def read_json(path: str | os.PathLike[str], what: str, *, shown: str | os.PathLike[str] | None = None,
              raw: bytes | None = None) -> Any:
    """The JSON document in the file ``path`` (``raw``, when already read), or one ``UsageError`` line naming
    ``what`` it was meant to be and the file: not UTF-8, not JSON, or nested deeper than ``MAX_DEPTH``.

    Every saved document jitscope reads back comes through here, then ``read_record`` (or, for a document
    that is no record, its own checks of the fields it uses)."""
    shown = os.fspath(path if shown is None else shown)
    data = read_input(path, what, shown=shown) if raw is None else raw
    try:
        text = data.decode("utf-8")
        document = json.loads(text)
    except UnicodeDecodeError as exc:
        raise NotJson(f"{what} {shown} is not UTF-8 text (byte {exc.start}): not a document jitscope wrote",
                         hint="name the file jitscope wrote") from None
    except RecursionError:  # json's parser recurses once per level: 100,000 brackets exhaust the stack
        too_deep: str | None = _too_deep_field(data)
    except ValueError as exc:  # JSONDecodeError; an integer of more than 4,300 digits
        raise NotJson(f"{what} {shown} is not JSON ({exc})", hint="name the file jitscope wrote") from None
    else:
        too_deep = _deeper_than(document, MAX_DEPTH)
    if too_deep is not None:  # named by the field that holds the nest: rows[0].x, not rows[0].x[0][0][0]...
        too_deep = re.sub(r"(\[\d+\])+$", "", too_deep)
        too_deep = too_deep if len(too_deep) <= 100 else f"{too_deep[:100]}..."
        raise UsageError(f"{what} {shown}: {too_deep or 'the document'} is nested more than {MAX_DEPTH} levels "
                         "deep: not a document jitscope wrote", hint="name the file jitscope wrote")
    return document


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
#: Stands for the part of a document nested too deeply for json to parse, so that the error can name its field.
_PLACEHOLDER = "\u0000nested too deeply\u0000"


def _too_deep_field(data: bytes) -> str:
    """The field holding the first container nested more than ``MAX_DEPTH`` deep in ``data``, which json
    cannot parse whole: that container is replaced by a placeholder and the rest parsed ("" when it cannot
    be; no recursion, so 100,000 levels are fine). The depth of every byte is a running sum (NumPy: a
    document may be hundreds of megabytes), brackets inside strings blanked out first."""
    import numpy as np

    blank = _STRING.sub(lambda m: b'"' + b"_" * (len(m.group()) - 2) + b'"', data)
    codes = np.frombuffer(blank, dtype=np.uint8)
    steps = np.zeros(len(codes), dtype=np.int32)
    steps[(codes == ord("[")) | (codes == ord("{"))] = 1
    steps[(codes == ord("]")) | (codes == ord("}"))] = -1
    depth = np.cumsum(steps)
    opened = np.flatnonzero(depth > MAX_DEPTH)
    if not len(opened):
        return ""
    start = int(opened[0])
    closed = np.flatnonzero(depth[start:] <= MAX_DEPTH)
    if not len(closed):
        return ""
    end = start + int(closed[0]) + 1
    text = (data[:start] + json.dumps(_PLACEHOLDER).encode() + data[end:]).decode("utf-8", "replace")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return ""
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        value, at = stack.pop()
        if value == _PLACEHOLDER:
            return at
        if isinstance(value, dict):
            stack.extend((v, f"{at}.{k}" if at else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(value))
    return ""


def _deeper_than(document: Any, limit: int) -> str | None:
    """The field where ``document`` nests more than ``limit`` levels deep, None when it does not (no recursion)."""
    stack: list[tuple[Any, str, int]] = [(document, "", 0)]
    while stack:
        value, at, depth = stack.pop()
        if depth > limit:
            return at
        if isinstance(value, dict):
            stack.extend((v, f"{at}.{k}" if at else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{at}[{i}]", depth + 1) for i, v in enumerate(value))
    return None


def read_record(cls: type[T], data: Any, what: str, shown: str | os.PathLike[str]) -> T:
    """``data`` (from ``read_json``) as a record of type ``cls``, every field checked against its type; one
    ``UsageError`` line naming the file and the field for the first that does not fit."""
    from jitscope.model.common import FieldError, from_jsonable

    try:
        return from_jsonable(cls, data)
    except FieldError as exc:
        raise UsageError(f"{what} {os.fspath(shown)}: {exc}: a damaged document, not read",
                         hint="name the file jitscope wrote, unchanged") from None


def require(ok: bool, what: str, shown: str | os.PathLike[str], field: str, problem: str) -> None:
    """One ``UsageError`` line naming the file and ``field`` unless ``ok``: a check beyond a field's type."""
    if not ok:
        raise UsageError(f"{what} {os.fspath(shown)}: {field} {problem}: a damaged document, not read",
                         hint="name the file jitscope wrote, unchanged")
