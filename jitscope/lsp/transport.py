"""JSON-RPC over a byte stream for ``jitscope lsp``: frames read within bounds, every request answered.

pygls's own reader trusts its input: after one malformed header it reads every later frame one line out of
step (the server stays alive and never answers again), it allocates whatever ``Content-Length`` says
(``1000000000000``: MemoryError), a request whose params do not fit their type gets no answer (the editor
waits forever), a body that is not JSON logs a traceback, and ``exit`` without ``shutdown`` ends with
status 0. So :mod:`.server` reads frames with :class:`FrameReader` and hands them to :class:`Dispatcher`:

- a header line is at most ``MAX_HEADER_LINE`` bytes, a body at most ``MAX_BODY_BYTES``; lines may end with
  LF alone; a frame whose header is bad (no length, not a number, over the limit) is skipped, said in one
  log line, and reading picks up at the next ``Content-Length`` header, even one that follows the
  skipped frame's body on the same line;
- a body that is not a JSON-RPC message is answered with the JSON-RPC error for it (parse error, invalid
  request), a request whose params do not fit with "invalid params", a request after ``shutdown`` with
  "invalid request": every request with an id gets a response;
- ``exit`` ends the server with 0 after ``shutdown`` and 1 without, as the LSP says.

Nothing here imports pygls: the dispatcher drives its protocol object through two methods.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)

#: Longest header line read (``Content-Length: 123`` is 20 bytes; a longer line is not a header).
MAX_HEADER_LINE = 4096
#: Largest body accepted: the JSON of the largest file lint reads (4 MB) with every character escaped.
MAX_BODY_BYTES = 32 * 1024 * 1024
_CHUNK = 65536
_HEADER = re.compile(rb"([A-Za-z0-9-]+)[ \t]*:[ \t]*(.*?)[ \t]*")
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)

# JSON-RPC's error codes
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


@dataclass(frozen=True, slots=True)
class BadFrame:
    """A frame that was skipped, and why."""

    reason: str


class FrameReader:
    """``Content-Length`` framed bodies from ``read_chunk`` (``os.read`` on a descriptor: no buffered reader
    whose lock a thread blocked in it would hold at interpreter exit), with bounded memory."""

    def __init__(self, read_chunk: Callable[[int], bytes]) -> None:
        self._read_chunk = read_chunk
        self._buffer = bytearray()
        self._eof = False

    def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = self._read_chunk(_CHUNK)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def _line(self) -> bytes | None:
        """The next line without its end (LF or CRLF), at most ``MAX_HEADER_LINE + 1`` bytes of it (a longer
        one is returned in pieces); None at the end of the stream."""
        while True:
            end = self._buffer.find(b"\n", 0, MAX_HEADER_LINE + 1)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line.removesuffix(b"\r")
            if len(self._buffer) > MAX_HEADER_LINE or not self._fill():
                if not self._buffer:
                    return None
                line = bytes(self._buffer[: MAX_HEADER_LINE + 1])
                del self._buffer[: MAX_HEADER_LINE + 1]
                return line

    def _exactly(self, size: int) -> bytes | None:
        while len(self._buffer) < size:
            if not self._fill():
                return None
        body = bytes(self._buffer[:size])
        del self._buffer[:size]
        return body

    def read(self) -> bytes | BadFrame | None:
        """The next body, a :class:`BadFrame` (skipped: the next call goes on after it), or None at the end
        of the stream."""
        length: int | None = None
        problem = ""
        headers = 0
        while True:
            line = self._line()
            if line is None:
                return BadFrame("the stream ended inside a header") if headers else None
            if not line:
                if headers:
                    break
                continue  # blank lines between frames
            header = _HEADER.fullmatch(line)
            if header is None or len(line) > MAX_HEADER_LINE:
                found = list(_CONTENT_LENGTH.finditer(line))
                if not found:  # not a header: the rest of a skipped frame
                    problem = problem or ("a header line is not `Name: value`" if headers else "")
                    continue
                header = _HEADER.fullmatch(line, found[-1].start())  # a header after a skipped body
                if header is None:
                    continue
                if headers:
                    log.warning("jitscope lsp: skipped a frame: %s",
                                problem or "a header line is not `Name: value`")
                length, problem, headers = None, "", 0  # the frame starts here
            headers += 1
            if header.group(1).lower() == b"content-length":
                value = header.group(2)
                if not (value.isdigit() and len(value) <= 20):
                    problem = f"Content-Length {value[:40].decode('latin-1')!r} is not a number of bytes"
                elif int(value) > MAX_BODY_BYTES:
                    problem = f"Content-Length {int(value):,} is over the limit ({MAX_BODY_BYTES:,} bytes)"
                else:
                    length = int(value)
        if problem or length is None:
            return BadFrame(problem or "no Content-Length header")
        body = self._exactly(length)
        if body is None:
            return BadFrame(f"the stream ended inside a body of {length:,} bytes")
        return body


def frame(message: dict[str, Any]) -> bytes:
    """``message`` as a frame (ASCII JSON: its length in characters is its length in bytes)."""
    body = json.dumps(message, ensure_ascii=True, separators=(",", ":"))
    return f"Content-Length: {len(body)}\r\n\r\n{body}".encode("ascii")


def error_response(msg_id: int | str | None, code: int, message: str) -> bytes:
    return frame({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


class RpcProtocol(Protocol):
    """What the dispatcher needs of pygls's ``JsonRPCProtocol``."""

    def structure_message(self, data: dict[str, Any]) -> Any: ...

    def handle_message(self, message: Any) -> None: ...


_NO_ID = object()


class Dispatcher:
    """Checks each body and hands it to ``protocol``, answering what the protocol would leave unanswered."""

    def __init__(self, protocol: RpcProtocol, write: Callable[[bytes], None]) -> None:
        self.protocol = protocol
        self.write = write
        self.shut_down = False
        #: the exit status once the client said ``exit`` (None before)
        self.exit_code: int | None = None

    def dispatch(self, body: bytes) -> None:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
            log.warning("jitscope lsp: a message is not JSON (%s); answered with a parse error", _short(err))
            self.write(error_response(None, PARSE_ERROR,
                                      f"Parse error: the message is not JSON ({_short(err)})"))
            return
        msg_id = data.get("id", _NO_ID) if isinstance(data, dict) else _NO_ID
        valid_id = msg_id is _NO_ID or msg_id is None or (
            isinstance(msg_id, int | str) and not isinstance(msg_id, bool))
        answer_to = msg_id if valid_id and msg_id is not _NO_ID else None
        problem = _envelope_problem(data, msg_id, valid_id)
        if problem:
            log.warning("jitscope lsp: invalid message: %s", problem)
            if msg_id is not _NO_ID or not isinstance(data, dict) or "method" not in data:
                self.write(error_response(answer_to, INVALID_REQUEST, f"Invalid request: {problem}"))
            return
        method = data.get("method")
        request = method is not None and msg_id is not _NO_ID
        if request and self.shut_down and method != "exit":
            self.write(error_response(answer_to, INVALID_REQUEST,
                                      f"Invalid request: {method} after shutdown"))
            return
        try:
            message = self.protocol.structure_message(data)
        except Exception as err:  # noqa: BLE001 - cattrs says which field did not fit, in its own types
            reason = _validation_reason(err.__cause__ or err)
            log.warning("jitscope lsp: invalid params for %s: %s", method or "a response", reason)
            if request:
                self.write(error_response(answer_to, INVALID_PARAMS,
                                          f"Invalid params for {method}: {reason}"))
            return
        try:
            self.protocol.handle_message(message)
        except SystemExit as done:  # pygls's `exit` handler: sys.exit(0 after shutdown, else 1)
            self.exit_code = done.code if isinstance(done.code, int) else 1
            return
        except BrokenPipeError:
            raise  # the client is gone: the server ends
        except Exception as err:  # noqa: BLE001 - a bug here or in pygls: said, answered, serving goes on
            log.exception("jitscope lsp: internal error handling %s", method or "a response")
            if request:
                self.write(error_response(answer_to, INTERNAL_ERROR, f"Internal error: {_short(err)}"))
            return
        if method == "shutdown":
            self.shut_down = True


def _envelope_problem(data: object, msg_id: object, valid_id: bool) -> str:
    if not isinstance(data, dict):
        return f"a message is a JSON object, not {type(data).__name__}"
    if data.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    if not valid_id:
        return '"id" must be a number or a string'
    if "method" in data:
        if not isinstance(data["method"], str):
            return '"method" must be a string'
        if "params" in data and not isinstance(data["params"], dict | list):
            return '"params" must be an object or an array'
    elif msg_id is _NO_ID:
        return 'a message without "method" must be a response with an "id"'
    return ""


def _validation_reason(err: BaseException) -> str:
    """The first field that did not fit, from cattrs's exception groups and their notes: ``HoverParams:
    textDocument: required field missing``."""
    path: list[str] = []
    while True:
        notes = getattr(err, "__notes__", ())
        path += [note.rpartition(" @ ")[2].removeprefix("attribute ") for note in notes]
        inner = getattr(err, "exceptions", None)
        if not inner:
            break
        err = inner[0]
    where = ".".join(p for p in path if p and " " not in p)
    what = "missing" if isinstance(err, KeyError) else _short(err)
    return what if not where else f"{where}: {what}"


def _short(err: BaseException) -> str:
    """One line of at most 200 characters naming ``err``."""
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= 200 else text[:197] + "..."
