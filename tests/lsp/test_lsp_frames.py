"""``jitscope lsp`` on hostile bytes: malformed headers, lies about lengths, bodies that are not JSON-RPC,
params that do not fit. Every request still gets a response, a bad frame is skipped with one log line,
nothing prints a traceback, and ``exit`` says whether ``shutdown`` came first (issue 30).

The server runs in a subprocess fed raw bytes over real pipes; ``communicate`` has a timeout, so a server
that goes deaf fails the test instead of hanging it. :class:`FrameReader` is also tested on its own."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys

import pytest

from jitscope.lsp.transport import MAX_BODY_BYTES, BadFrame, Dispatcher, FrameReader

#: Seconds a whole exchange may take (a cold start imports the linter: about a second).
TIMEOUT_S = 60
#: The server runs on pygls (the ``lsp`` extra); the frame reader and dispatcher below are tested without it.
needs_pygls = pytest.mark.skipif(importlib.util.find_spec("pygls") is None,
                                 reason="pygls is not installed (pip install -e '.[lsp]')")


def _frame(message: dict[str, object], newline: bytes = b"\r\n") -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d" % len(body) + newline + newline + body


def _request(msg_id: int, method: str, params: object = None) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return _frame(message)


INITIALIZE = _request(1, "initialize", {"capabilities": {}})
SHUTDOWN_EXIT = _request(99, "shutdown") + _frame({"jsonrpc": "2.0", "method": "exit"})


def _responses(out: bytes) -> list[dict[str, object]]:
    """The JSON bodies of the frames the server wrote."""
    reader = FrameReader(io.BytesIO(out).read)
    bodies = []
    while (body := reader.read()) is not None:
        assert isinstance(body, bytes), body
        bodies.append(json.loads(body))
    return bodies


def _exchange(payload: bytes) -> tuple[int, dict[object, dict[str, object]], str]:
    """Run the server on ``payload``: its exit status, its responses by id, its stderr."""
    process = subprocess.Popen([sys.executable, "-m", "jitscope", "lsp"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ})
    try:
        out, err = process.communicate(payload, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the server stopped answering; it sent {out[-500:]!r}, logged {err[-2000:]!r}")
    answers = {r["id"]: r for r in _responses(out) if "id" in r and "method" not in r}
    return process.returncode, answers, err.decode(errors="replace")


@pytest.mark.lsp
@needs_pygls
def test_bad_frames_are_skipped_and_every_later_request_is_answered() -> None:
    hover = {"textDocument": {"uri": "file:///nowhere/never_opened.py"},
             "position": {"line": 0, "character": 0}}
    payload = b"".join((
        INITIALIZE,
        b"Content-Length: abc\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "id": 50, "method": "exit"}).encode(),
        _request(2, "textDocument/hover", hover),
        b"Content-Length: -5\r\n\r\n",
        _request(3, "textDocument/hover", hover),
        b"Content-Length: 1000000000000\r\n\r\n{}",
        _request(4, "textDocument/hover", hover),
        _frame({"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": hover}, newline=b"\n"),
        b"Content-Length: 5\r\n\r\nhello",  # not JSON: a parse error, id null
        b"Content-Length: 2\r\n\r\n[]",  # JSON, not a message: invalid request, id null
        _request(6, "textDocument/hover", {"position": "here"}),  # params that do not fit
        _frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"x": 1}}),  # bad notification
        _frame({"jsonrpc": "1.0", "id": 7, "method": "textDocument/hover", "params": hover}),
        _request(8, "textDocument/hover", hover),
        SHUTDOWN_EXIT,
    ))
    code, answers, log = _exchange(payload)
    assert code == 0, log
    assert 50 not in answers  # the request inside the skipped frame: its frame could not be read
    for msg_id in (1, 2, 3, 4, 5, 8, 99):
        assert "result" in answers[msg_id], (msg_id, answers[msg_id])
    assert answers[None]["error"]["code"] in (-32700, -32600)  # type: ignore[index]
    assert answers[6]["error"]["code"] == -32602  # type: ignore[index]
    assert "textDocument/hover" in answers[6]["error"]["message"]  # type: ignore[index]
    assert answers[7]["error"]["code"] == -32600  # type: ignore[index]
    assert "Traceback" not in log
    assert "Content-Length 'abc' is not a number of bytes" in log
    assert "over the limit" in log


@pytest.mark.lsp
@needs_pygls
def test_every_request_gets_a_response_even_after_shutdown() -> None:
    after = _request(3, "textDocument/hover", {})
    code, answers, log = _exchange(INITIALIZE + _request(2, "shutdown") + after
                                   + _frame({"jsonrpc": "2.0", "method": "exit"}))
    assert code == 0, log
    assert answers[2]["result"] is None
    assert answers[3]["error"]["code"] == -32600  # type: ignore[index]


@pytest.mark.lsp
@needs_pygls
def test_exit_without_shutdown_exits_1() -> None:
    code, answers, log = _exchange(INITIALIZE + _frame({"jsonrpc": "2.0", "method": "exit"}))
    assert code == 1, log
    assert "result" in answers[1]
    assert "Traceback" not in log


def _read_all(data: bytes) -> list[bytes | BadFrame]:
    reader = FrameReader(io.BytesIO(data).read)
    found = []
    while (item := reader.read()) is not None:
        found.append(item)
    return found


def test_frames_with_lf_line_ends_or_more_headers_are_read() -> None:
    data = (b"Content-Length: 2\n\n{}" + b"content-length:2\r\nContent-Type: application/json\r\n\r\n[]"
            + b"\r\n\r\nContent-Length: 1\r\n\r\n1")
    assert _read_all(data) == [b"{}", b"[]", b"1"]


def test_reading_resumes_at_the_header_after_a_skipped_body() -> None:
    data = b"Content-Length: x\r\n\r\n{\"a\": 1}Content-Length: 2\r\n\r\n{}"
    assert _read_all(data) == [BadFrame("Content-Length 'x' is not a number of bytes"), b"{}"]


def test_memory_stays_bounded_on_lies_and_endless_lines() -> None:
    reads: list[int] = []
    stream = io.BytesIO(b"Content-Length: %d\r\n\r\n{}" % (MAX_BODY_BYTES + 1) + b"x" * 1_000_000
                        + b"\r\n" + b"Content-Length: 2\r\n\r\n{}")

    def read(size: int) -> bytes:
        reads.append(size)
        return stream.read(size)

    reader = FrameReader(read)
    assert isinstance(reader.read(), BadFrame)
    assert reader.read() == b"{}"  # the megabyte line was read in bounded pieces and skipped
    assert max(reads) <= 65536
    assert len(reader._buffer) == 0


def test_a_stream_that_ends_inside_a_frame_is_a_bad_frame_then_the_end() -> None:
    ended = BadFrame("the stream ended inside a body of 10 bytes")
    assert _read_all(b"Content-Length: 10\r\n\r\n{}") == [ended]
    assert _read_all(b"Content-Length: 10") == [BadFrame("the stream ended inside a header")]


class _Raising:
    """A protocol whose handler fails: a bug must not end the server or leave the request unanswered."""

    def structure_message(self, data: dict[str, object]) -> dict[str, object]:
        return data

    def handle_message(self, message: object) -> None:
        raise ValueError("boom")


def test_a_failing_handler_is_answered_with_an_internal_error() -> None:
    written: list[bytes] = []
    dispatcher = Dispatcher(_Raising(), written.append)
    dispatcher.dispatch(b'{"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": {}}')
    dispatcher.dispatch(b'{"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {}}')
    (answer,) = _responses(b"".join(written))
    assert answer["id"] == 4 and answer["error"]["code"] == -32603  # type: ignore[index]
    assert dispatcher.exit_code is None


@pytest.mark.parametrize("body", [b"\xff\xfe{}", b"[" * 100_000 + b"]" * 100_000, b'{"jsonrpc": "2.0", "id": '])
def test_bodies_that_are_not_json_get_a_parse_error(body: bytes) -> None:
    written: list[bytes] = []
    Dispatcher(_Raising(), written.append).dispatch(body)
    (answer,) = _responses(b"".join(written))
    assert answer["id"] is None and answer["error"]["code"] == -32700  # type: ignore[index]
