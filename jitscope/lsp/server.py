"""The Language Server: lint findings as diagnostics, the rule's docs on hover, fixes and suppressions as
code actions.

Built on pygls 2 (``pygls.lsp.server.LanguageServer``, lsprotocol's types), over stdin/stdout.

- ``textDocument/didOpen`` and ``didSave``: lint the buffer now and publish its diagnostics (with the
  document version they describe).
- ``didChange``: lint again once the typing pauses (``debounce_s`` after the last change, or twice the
  file's last lint time where that is longer: a 10,000-line module takes about a second to lint).
- ``didClose``: clear the file's diagnostics.
- ``textDocument/hover`` over a finding: the rule's documentation (:mod:`.hover`).
- ``textDocument/codeAction`` on a finding: its safe fix where it has one, ``# jitscope: ignore[CODE]`` on
  its line; ``source.fixAll.jitscope``: every safe fix in the file (:mod:`.actions`).

Hover and code actions answer for the text the editor has now: a buffer changed since its last lint
is linted first, so an edit never lands on a line that moved.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from concurrent.futures import CancelledError
from functools import partial
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from jitscope import __version__
from jitscope.lsp.actions import KINDS, code_actions
from jitscope.lsp.buffers import Linted, lint_buffer
from jitscope.lsp.hover import rule_markdown
from jitscope.lsp.neighbours import Neighbours
from jitscope.lsp.protocol import ClientText, covers
from jitscope.lsp.transport import BadFrame, Dispatcher, FrameReader

log = logging.getLogger(__name__)

#: Seconds without a change before a changed buffer is linted again.
DEBOUNCE_S = 0.4


class JitscopeServer(LanguageServer):
    """A pygls server that remembers each open buffer's last lint."""

    def __init__(self, debounce_s: float = DEBOUNCE_S) -> None:
        super().__init__("jitscope", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.debounce_s = debounce_s
        self.linted: dict[str, Linted] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._cost: dict[str, float] = {}
        self._errors_shown: set[str] = set()
        self.neighbours = Neighbours(self._open_text)

    # -- linting -----------------------------------------------------------------------------------

    def lint(self, uri: str) -> Linted | None:
        """Lint the buffer now and publish its diagnostics; None for a buffer that is not Python, or not open
        (pygls would read the file: a FIFO or /dev/zero there would block the server)."""
        self.cancel(uri)
        if not self.is_open(uri):
            return None
        document = self.workspace.get_text_document(uri)
        path = _path_of(uri)
        if not _is_python(document.language_id, path):
            return None
        text = document.source
        started = time.perf_counter()
        try:
            result = lint_buffer(path, text, self._root(), self.neighbours)
        except Exception as err:  # a jitscope bug: said once, and the server keeps serving
            log.exception("linting %s failed", uri)
            self._show_once(f"jitscope: internal error while linting ({type(err).__name__}: {err}); please report it")
            return None
        self._cost[uri] = time.perf_counter() - started
        if result.error:
            self._show_once(f"jitscope: {result.error}")
        elif result.skipped:
            log.info("not linted: %s: %s", path, result.skipped)
        linted = Linted(document.version, text, result.findings, path, self._root(), self.neighbours)
        self.linted[uri] = linted
        client = self.client_text(linted)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, version=document.version, diagnostics=[client.diagnostic(f) for f in linted.findings]
        ))
        return linted

    def current(self, uri: str) -> Linted | None:
        """The lint of the buffer as it is now (linted again if it changed since)."""
        linted = self.linted.get(uri)
        if linted is not None and self.is_open(uri) and linted.version == self.workspace.get_text_document(
                uri).version:
            return linted
        return self.lint(uri)

    def schedule(self, uri: str) -> None:
        """Lint ``uri`` once changes pause."""
        self.cancel(uri)
        delay = max(self.debounce_s, 2 * self._cost.get(uri, 0.0))
        self._pending[uri] = asyncio.get_running_loop().call_later(delay, self._lint_if_open, uri)

    def cancel(self, uri: str) -> None:
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()

    def close(self, uri: str) -> None:
        self.cancel(uri)
        self.linted.pop(uri, None)
        self._cost.pop(uri, None)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def relint_open(self) -> None:
        """Lint every open buffer again (the configuration changed)."""
        for uri in list(self.linted):
            self.lint(uri)

    def _lint_if_open(self, uri: str) -> None:
        self._pending.pop(uri, None)
        self.lint(uri)

    def is_open(self, uri: str) -> bool:
        return unquote(uri) in self.workspace.text_documents

    def _open_text(self, path: Path) -> str | None:
        """The unsaved text of ``path`` where it is open in the editor."""
        document = self.workspace.text_documents.get(unquote(path.as_uri()))
        return None if document is None else document.source

    def _root(self) -> Path | None:
        root = self.workspace.root_path
        return Path(root) if root else None

    def _show_once(self, message: str) -> None:
        if message not in self._errors_shown:
            self._errors_shown.add(message)
            self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=message))

    # -- positions ---------------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        """The position encoding agreed with the client: utf-16 (the default), utf-8 or utf-32."""
        agreed = self.workspace.position_encoding
        return str(getattr(agreed, "value", agreed) or "utf-16")

    def client_text(self, linted: Linted) -> ClientText:
        return ClientText(linted.lines, self.encoding)


def build_server(debounce_s: float = DEBOUNCE_S) -> JitscopeServer:
    """A server with every feature registered."""
    server = JitscopeServer(debounce_s)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: JitscopeServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.lint(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: JitscopeServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    def did_save(ls: JitscopeServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = _path_of(params.text_document.uri)
        if path is not None and path.name == "pyproject.toml":
            ls.relint_open()
        else:
            ls.lint(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: JitscopeServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: JitscopeServer, params: None) -> None:
        for uri in list(ls.linted):
            ls.cancel(uri)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: JitscopeServer, params: lsp.HoverParams) -> lsp.Hover | None:
        linted = ls.current(params.text_document.uri)
        if linted is None:
            return None
        client = ls.client_text(linted)
        at = client.finding_position(params.position)
        found = [f for f in linted.findings if covers(f, at, at)]
        if not found:
            return None
        docs = [rule_markdown(f) for f in {f.code: f for f in found}.values()]
        return lsp.Hover(
            contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(docs)),
            range=client.range_of(found[0]),
        )

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=list(KINDS)))
    def code_action(ls: JitscopeServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        uri = params.text_document.uri
        linted = ls.current(uri)
        if linted is None:
            return None
        return code_actions(uri, linted, ls.client_text(linted), params.range, params.context.only)

    return server


def serve(debounce_s: float = DEBOUNCE_S) -> int:
    """Serve over stdin/stdout until the client says exit (or closes the pipe); the exit status: 1 for an
    ``exit`` without ``shutdown``, as the LSP says, else 0."""
    server = build_server(debounce_s)
    protocol_out = sys.stdout.buffer
    # stdout is the JSON-RPC stream: a stray print anywhere in the process must not land in it.
    sys.stdout = sys.stderr
    writer = _Writer(protocol_out)
    server.protocol.set_writer(writer)
    # pygls logs a traceback for params that do not fit their type; the dispatcher says it in one line
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_no_deserialize_traceback)
    dispatcher = Dispatcher(server.protocol, writer.write)
    try:
        return asyncio.run(_serve_frames(FrameReader(partial(os.read, sys.stdin.fileno())), dispatcher))
    except BrokenPipeError:
        log.error("jitscope lsp: the client closed the connection")
        return 1
    finally:
        server.shutdown()


async def _serve_frames(reader: FrameReader, dispatcher: Dispatcher) -> int:
    """Hand each frame to the dispatcher, on the event loop (where pygls runs the handlers), until ``exit``
    or the end of the input. A daemon thread reads: one blocked in a read never keeps the process alive."""
    loop = asyncio.get_running_loop()
    frames: asyncio.Queue[bytes | BadFrame | None] = asyncio.Queue(maxsize=1)

    def read_all() -> None:
        item: bytes | BadFrame | None = b""
        while item is not None:
            item = reader.read()
            try:
                asyncio.run_coroutine_threadsafe(frames.put(item), loop).result()
            except (RuntimeError, CancelledError):  # the loop ended (exit): nobody reads any more
                return

    threading.Thread(target=read_all, name="jitscope-lsp-reader", daemon=True).start()
    while dispatcher.exit_code is None:
        item = await frames.get()
        if item is None:
            return 0
        if isinstance(item, BadFrame):
            log.warning("jitscope lsp: skipped a frame: %s", item.reason)
            continue
        dispatcher.dispatch(item)
    return dispatcher.exit_code


class _Writer:
    """pygls's writer interface over the binary stdout."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(data)
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()


def _no_deserialize_traceback(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Unable to deserialize message")


def _path_of(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


def _is_python(language_id: str | None, path: Path | None) -> bool:
    if language_id:
        return language_id == "python"
    return path is not None and path.suffix in (".py", ".pyi")
