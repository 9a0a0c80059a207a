"""A real LSP client (pygls's ``LanguageClient``) talking to ``jitscope lsp`` in a subprocess over stdio.

``session(tmp_path)`` starts the server through the console entry point (``jitscope.cli.app.main``
with ``jitscope lsp`` on the command line), sends ``initialize``/``initialized``, and at the end
``shutdown`` and ``exit``, then checks that the server process ended. The server's stderr goes to
``server.log`` in the project folder (shown when a test fails), and at exit the server writes the
jax modules it had imported to ``modules.txt`` (none: lint never imports jax).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="jitscope lsp needs pygls 2 (the `lsp` extra: pip install '.[lsp]')")

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

#: Seconds to wait for one answer or notification (a cold start imports the linter: about a second).
TIMEOUT_S = 60.0

_WRAPPER = """\
import atexit, os, sys
log = open(os.environ["JITSCOPE_LSP_LOG"], "w")
os.dup2(log.fileno(), 2)
def record():
    with open(os.environ["JITSCOPE_LSP_MODULES"], "w") as out:
        out.write("\\n".join(sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib"))))
atexit.register(record)
sys.argv = ["jitscope", "lsp", *sys.argv[1:]]
from jitscope.cli.app import main
main()
"""


class Session:
    """The client, and what the server has sent it: diagnostics per document URI, and messages."""

    def __init__(self, client: LanguageClient, folder: Path) -> None:
        self.client = client
        self.folder = folder
        self.published: list[lsp.PublishDiagnosticsParams] = []
        #: every document the server published diagnostics for, in order (``published`` is consumed)
        self.published_for: list[str] = []
        self.messages: list[lsp.ShowMessageParams] = []
        self._arrived = asyncio.Event()
        self.versions: dict[str, int] = {}

    def uri(self, name: str) -> str:
        return (self.folder / name).as_uri()

    def _arrival(self) -> None:
        self._arrived.set()

    async def diagnostics(self, uri: str, version: int | None = None) -> list[lsp.Diagnostic]:
        """The next diagnostics published for ``uri`` (for ``version``, when given) that are not yet read."""
        async def wait() -> lsp.PublishDiagnosticsParams:
            while True:
                for index, params in enumerate(self.published):
                    if params.uri == uri and (version is None or params.version == version):
                        del self.published[: index + 1]
                        return params
                self._arrived.clear()
                await self._arrived.wait()

        return list((await asyncio.wait_for(wait(), TIMEOUT_S)).diagnostics)

    def open(self, name: str, text: str) -> str:
        uri = self.uri(name)
        self.versions[uri] = 1
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        ))
        return uri

    def change(self, uri: str, text: str) -> int:
        """Replace the whole text (a full-document change); returns the new version."""
        self.versions[uri] += 1
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        ))
        return self.versions[uri]

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )

    async def hover(self, uri: str, line: int, character: int) -> lsp.Hover | None:
        return await asyncio.wait_for(self.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line, character)
        )), TIMEOUT_S)

    async def code_actions(self, uri: str, at: lsp.Range, diagnostics: list[lsp.Diagnostic] = (),  # type: ignore[assignment]
                           only: list[str] | None = None) -> list[lsp.CodeAction]:
        answer = await asyncio.wait_for(self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), range=at,
            context=lsp.CodeActionContext(diagnostics=list(diagnostics), only=only),
        )), TIMEOUT_S)
        return [a for a in answer or [] if isinstance(a, lsp.CodeAction)]


@asynccontextmanager
async def session(folder: Path, *args: str, position_encodings: list[str] | None = None) -> AsyncIterator[Session]:
    """A running server for a project in ``folder``, initialized; shut down and exited at the end."""
    wrapper = folder.parent / f"{folder.name}-serve.py"
    wrapper.write_text(_WRAPPER)
    env = {**os.environ, "JITSCOPE_LSP_LOG": str(folder.parent / "server.log"),
           "JITSCOPE_LSP_MODULES": str(folder.parent / "modules.txt")}
    client = LanguageClient("jitscope-tests", "1")
    state = Session(client, folder)

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        state.published.append(params)
        state.published_for.append(params.uri)
        state._arrival()

    @client.feature(lsp.WINDOW_SHOW_MESSAGE)
    def shown(params: lsp.ShowMessageParams) -> None:
        state.messages.append(params)

    await client.start_io(sys.executable, str(wrapper), *args, cwd=str(folder), env=env)
    general = lsp.GeneralClientCapabilities(
        position_encodings=[lsp.PositionEncodingKind(e) for e in position_encodings]
    ) if position_encodings else None
    result = await asyncio.wait_for(client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(general=general),
        root_uri=folder.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)],
    )), TIMEOUT_S)
    state.capabilities = result.capabilities  # type: ignore[attr-defined]
    client.initialized(lsp.InitializedParams())
    try:
        yield state
    finally:
        await asyncio.wait_for(client.shutdown_async(None), TIMEOUT_S)
        client.exit(None)
        await asyncio.wait_for(client.stop(), TIMEOUT_S)
