"""``jitscope lsp``: the linter as a Language Server over stdin/stdout, for editors."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated

import typer

from jitscope.errors import UsageError

#: What to run when pygls is missing or too old (the ``lsp`` extra pins the versions that work).
INSTALL = "pip install 'jitscope[lsp]'"


def lsp(
    stdio: Annotated[
        bool,
        typer.Option("--stdio", help="Talk LSP over stdin/stdout: the only transport, and the default "
                     "(accepted because editor clients pass it).", show_default=False),
    ] = True,
    debounce: Annotated[
        float,
        typer.Option(help="Seconds without typing before a changed file is linted again.", min=0.0),
    ] = 0.4,
) -> None:
    """Serve lint findings to an editor (VS Code, Neovim...): diagnostics, rule docs on hover, quick fixes.

    Reads [tool.jitscope.lint] from the pyproject.toml above each file, as jitscope lint does; never
    imports or runs your code. See docs/guides/lint.md, "In your editor", for the editor set-up.
    """
    serve = _load_server()
    if sys.stdin is not None and sys.stdin.isatty():
        print("jitscope lsp: speaking the Language Server Protocol on stdin/stdout; start it from your editor "
              "(docs/guides/lint.md: In your editor). Ctrl-C to stop.", file=sys.stderr)
    code = serve(debounce)
    if code:
        raise typer.Exit(code)


def _load_server() -> Callable[[float], int]:
    """``jitscope.lsp.server.serve``, or one line saying how to install pygls 2."""
    try:
        from jitscope.lsp.server import serve
    except ImportError as err:
        if (err.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise
        found = _installed("pygls")
        if found is None:
            why = "needs pygls"
        elif not found.startswith("2."):  # pygls 1.x: another API (pygls.server.LanguageServer)
            why = f"needs pygls 2 (found pygls {found})"
        else:
            why = f"cannot import {err.name}"
        raise UsageError(f"jitscope lsp {why}: {INSTALL}") from None
    return serve


def _installed(name: str) -> str | None:
    """The installed version of ``name``; None where it cannot be imported."""
    from importlib.metadata import PackageNotFoundError, version
    from importlib.util import find_spec

    try:
        return version(name) if find_spec(name) is not None else None
    except (PackageNotFoundError, ValueError):
        return None


def register(app: typer.Typer) -> None:
    app.command("lsp")(lsp)
