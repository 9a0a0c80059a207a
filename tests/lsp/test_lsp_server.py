"""``jitscope lsp`` end to end: a real LSP client (pygls) drives the server in a subprocess over stdio.

Marked ``lsp``; skipped where pygls (the ``lsp`` extra) is not installed.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from tests.lsp.lsp_session import lsp, session

pytestmark = pytest.mark.lsp

HAZARD = textwrap.dedent("""\
    import jax


    @jax.jit
    def step(x):
        print("x =", x)
        return x * 2
""")


def _project(tmp_path: Path, lint_table: str = "", files: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(f"[project]\nname = 'proj'\n\n[tool.jitscope.lint]\n{lint_table}\n")
    for name, text in (files or {"train.py": HAZARD}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _run(scenario) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(scenario)


def _log(tmp_path: Path) -> str:
    log = tmp_path / "server.log"
    return log.read_text() if log.exists() else ""


def test_open_publishes_the_finding_with_code_range_and_severity(tmp_path: Path) -> None:
    folder = _project(tmp_path)

    async def scenario() -> None:
        async with session(folder) as s:
            assert s.capabilities.hover_provider  # type: ignore[attr-defined]
            uri = s.open("train.py", HAZARD)
            diagnostics = await s.diagnostics(uri, version=1)
            assert [(d.code, d.source, d.severity) for d in diagnostics] == [
                ("JS101", "jitscope", lsp.DiagnosticSeverity.Warning)
            ]
            # print("x =", x) on line 6 (0-based 5), columns 4 to 19
            assert diagnostics[0].range == lsp.Range(lsp.Position(5, 4), lsp.Position(5, 19))
            assert "print() in `step`" in diagnostics[0].message

    _run(scenario())
    # The server never imported jax (lint does not either): `jitscope lsp` starts as fast as `jitscope lint`.
    assert (tmp_path / "modules.txt").read_text() == "", _log(tmp_path)


def test_hover_over_a_finding_shows_the_rules_documentation(tmp_path: Path) -> None:
    folder = _project(tmp_path)

    async def scenario() -> None:
        async with session(folder) as s:
            uri = s.open("train.py", HAZARD)
            await s.diagnostics(uri)
            hover = await s.hover(uri, 5, 6)
            assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
            assert hover.contents.kind == lsp.MarkupKind.Markdown
            text = hover.contents.value
            assert text.startswith("**JS101** `print-in-traced-code` (warning)")
            assert "#### What it does" in text and "jax.debug.print" in text
            assert hover.range == lsp.Range(lsp.Position(5, 4), lsp.Position(5, 19))
            assert await s.hover(uri, 6, 4) is None  # `return x * 2`: no finding there

    _run(scenario())


def _action(actions: list[lsp.CodeAction], title_start: str) -> lsp.CodeAction:
    [found] = [a for a in actions if a.title.startswith(title_start)]
    return found


def _applied(text: str, edits: list[lsp.TextEdit]) -> str:
    """``text`` with LSP edits made as a client makes them (ASCII text: columns are characters)."""
    lines = text.split("\n")
    offsets = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines) + 1)]
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = offsets[edit.range.start.line] + edit.range.start.character
        end = offsets[edit.range.end.line] + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text


def test_code_action_adds_the_suppression_comment_and_the_finding_goes(tmp_path: Path) -> None:
    folder = _project(tmp_path)

    async def scenario() -> None:
        async with session(folder) as s:
            uri = s.open("train.py", HAZARD)
            diagnostics = await s.diagnostics(uri)
            actions = await s.code_actions(uri, lsp.Range(lsp.Position(5, 6), lsp.Position(5, 6)), diagnostics)
            action = _action(actions, "Ignore JS101 on this line (# jitscope: ignore[JS101])")
            assert action.kind == lsp.CodeActionKind.QuickFix and not action.is_preferred
            assert action.diagnostics is not None and action.diagnostics[0].code == "JS101"
            assert action.edit is not None and action.edit.changes is not None
            [edit] = action.edit.changes[uri]
            assert edit.range == lsp.Range(lsp.Position(5, 19), lsp.Position(5, 19))
            assert edit.new_text == "  # jitscope: ignore[JS101]"
            # The client applies the edit: the finding is gone from the next diagnostics.
            version = s.change(uri, _applied(HAZARD, [edit]))
            assert await s.diagnostics(uri, version=version) == []
            # A request for other kinds of action gets none of these.
            assert await s.code_actions(uri, lsp.Range(lsp.Position(5, 6), lsp.Position(5, 6)),
                                        only=[lsp.CodeActionKind.SourceOrganizeImports]) == []

    _run(scenario())


def test_code_action_applies_the_safe_fix(tmp_path: Path) -> None:
    """The fix jitscope lint --fix would make, offered as the preferred quick fix on the finding."""
    folder = _project(tmp_path)

    async def scenario() -> None:
        async with session(folder) as s:
            uri = s.open("train.py", HAZARD)
            diagnostics = await s.diagnostics(uri)
            actions = await s.code_actions(uri, diagnostics[0].range, diagnostics)
            assert [a.title for a in actions] == [
                "Fix JS101: Replace with `jax.debug.print(...)`",
                "Ignore JS101 on this line (# jitscope: ignore[JS101])",
                "Apply every safe jitscope fix in this file (1)",
            ]
            fix = actions[0]
            assert fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred
            assert fix.edit is not None and fix.edit.changes is not None
            fixed = _applied(HAZARD, list(fix.edit.changes[uri]))
            assert fixed.split("\n")[5] == '    jax.debug.print("x = {!s}", x)'
            version = s.change(uri, fixed)
            assert await s.diagnostics(uri, version=version) == []

    _run(scenario())


def test_fix_all_applies_every_safe_fix_in_the_file(tmp_path: Path) -> None:
    text = textwrap.dedent("""\
        import jax
        import jax.numpy as jnp


        @jax.jit
        def step(x):
            print("x =", x)
            y = jnp.zeros(3)
            y[0] = 1.0
            return x * 2 + y
    """)
    folder = _project(tmp_path, files={"train.py": text})

    async def scenario() -> None:
        async with session(folder) as s:
            uri = s.open("train.py", text)
            assert sorted(d.code for d in await s.diagnostics(uri)) == ["JS101", "JS204"]
            # What VS Code asks on save with "editor.codeActionsOnSave": {"source.fixAll": "explicit"}
            [action] = await s.code_actions(uri, lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
                                            only=[lsp.CodeActionKind.SourceFixAll])
            assert action.kind == "source.fixAll.jitscope"
            assert action.title == "Apply every safe jitscope fix in this file (2)"
            assert action.edit is not None and action.edit.changes is not None
            fixed = _applied(text, list(action.edit.changes[uri]))
            assert "    y = y.at[0].set(1.0)\n" in fixed and 'jax.debug.print("x = {!s}", x)' in fixed
            version = s.change(uri, fixed)
            assert await s.diagnostics(uri, version=version) == []
            # Nothing left to fix: no fix-all on offer.
            assert await s.code_actions(uri, lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
                                        only=[lsp.CodeActionKind.Source]) == []

    _run(scenario())


def test_change_relints_after_a_pause_and_save_relints(tmp_path: Path) -> None:
    folder = _project(tmp_path, files={"train.py": "import jax\n"})

    async def scenario() -> None:
        async with session(folder, "--debounce", "0.05") as s:
            uri = s.open("train.py", "import jax\n")
            assert await s.diagnostics(uri, version=1) == []
            # Typing: three quick changes, then a pause; the last version is linted.
            s.change(uri, "import jax\n@jax.jit\n")
            s.change(uri, "import jax\n@jax.jit\ndef f(x):\n")
            version = s.change(uri, HAZARD)
            assert [d.code for d in await s.diagnostics(uri, version=version)] == ["JS101"]
            # Saving lints at once.
            (folder / "train.py").write_text(HAZARD)
            s.save(uri)
            assert [d.code for d in await s.diagnostics(uri, version=version)] == ["JS101"]
            # A code action on a buffer changed since its last lint answers for the text as it is now.
            moved = "\n\n" + HAZARD
            s.change(uri, moved)
            actions = await s.code_actions(uri, lsp.Range(lsp.Position(7, 6), lsp.Position(7, 6)))
            ignore = _action(actions, "Ignore JS101")
            assert ignore.edit is not None and ignore.edit.changes is not None
            assert ignore.edit.changes[uri][0].range.start == lsp.Position(7, 19)
            s.client.text_document_did_close(
                lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            )
            while await s.diagnostics(uri) != []:  # closing clears the file's diagnostics
                pass

    _run(scenario())


def test_the_projects_configuration_applies(tmp_path: Path) -> None:
    """select/ignore, per-file-ignores and exclude from [tool.jitscope.lint], as jitscope lint reads them."""
    scratch = "import jax\n@jax.jit\ndef f(x):\n    if x > 0:\n        print(x)\n    return x\n"
    folder = _project(
        tmp_path,
        'ignore = ["JS101"]\nexclude = ["legacy/"]\n[tool.jitscope.lint.per-file-ignores]\n"scripts/*" = ["JS201"]\n',
        {"train.py": scratch, "scripts/run.py": scratch, "legacy/old.py": scratch},
    )

    async def scenario() -> None:
        async with session(folder) as s:
            assert [d.code for d in await s.diagnostics(s.open("train.py", scratch))] == ["JS201"]
            assert await s.diagnostics(s.open("scripts/run.py", scratch)) == []
            assert await s.diagnostics(s.open("legacy/old.py", scratch)) == []
            # Editing the configuration applies at the next lint.
            (folder / "pyproject.toml").write_text("[tool.jitscope.lint]\nselect = [\"JS1\"]\n")
            s.save(s.uri("train.py"))
            assert [d.code for d in await s.diagnostics(s.uri("train.py"))] == ["JS101"]
            # A broken configuration is said once, in one line, and nothing is linted (jitscope lint exits 2).
            (folder / "pyproject.toml").write_text("[tool.jitscope.lint]\nselcet = [\"JS1\"]\n")
            s.save(s.uri("train.py"))
            assert await s.diagnostics(s.uri("train.py")) == []
            assert [m.type for m in s.messages] == [lsp.MessageType.Error]
            assert "unknown key 'selcet'" in s.messages[0].message
            assert "did you mean 'select'?" in s.messages[0].message

    _run(scenario())


@pytest.mark.parametrize(("encodings", "start", "end"), [
    (None, 14, 25),  # UTF-16, the default: the emoji counts 2
    (["utf-32"], 13, 24),
    (["utf-8"], 16, 27),  # the emoji is 4 bytes
])
def test_positions_are_in_the_encoding_agreed_with_the_client(
    tmp_path: Path, encodings: list[str] | None, start: int, end: int
) -> None:
    text = 'import jax\n@jax.jit\ndef f(x):\n    y = "🙂"; print(y, x)\n    return x\n'
    folder = _project(tmp_path, files={"emoji.py": text})

    async def scenario() -> None:
        async with session(folder, position_encodings=encodings) as s:
            uri = s.open("emoji.py", text)
            [diagnostic] = await s.diagnostics(uri)
            assert diagnostic.range == lsp.Range(lsp.Position(3, start), lsp.Position(3, end))
            hover = await s.hover(uri, 3, end - 1)
            assert hover is not None and hover.range == diagnostic.range
            action = _action(await s.code_actions(uri, diagnostic.range, [diagnostic]), "Ignore JS101")
            assert action.edit is not None and action.edit.changes is not None
            assert action.edit.changes[uri][0].range.start == lsp.Position(3, end)  # the end of the line

    _run(scenario())


def test_a_file_that_does_not_parse_gets_its_syntax_error_and_no_suppression(tmp_path: Path) -> None:
    folder = _project(tmp_path, files={"broken.py": "def f(:\n"})

    async def scenario() -> None:
        async with session(folder) as s:
            uri = s.open("broken.py", "def f(:\n")
            [diagnostic] = await s.diagnostics(uri)
            assert diagnostic.code == "JS000" and diagnostic.severity == lsp.DiagnosticSeverity.Error
            assert await s.code_actions(uri, diagnostic.range, [diagnostic]) == []

    _run(scenario())



def test_fix_edits_are_written_in_the_files_newline_style(tmp_path: Path) -> None:
    """The server's actions without a server: a fix that adds an import line in a CRLF file adds CRLF."""
    from jitscope.lsp.actions import code_actions
    from jitscope.lsp.buffers import Linted, lint_buffer
    from jitscope.lsp.protocol import ClientText

    text = "import jax\r\n\r\n@jax.jit\r\ndef f(x):\r\n    if x > 0:\r\n        y = x * 2\r\n    else:\r\n" \
           "        y = x * 3\r\n    return y\r\n"
    linted = Linted(1, text, lint_buffer(None, text, start=tmp_path).findings)
    uri = (tmp_path / "m.py").as_uri()
    actions = code_actions(uri, linted, ClientText(linted.lines), lsp.Range(lsp.Position(4, 7), lsp.Position(4, 7)),
                           None)
    fix = _action(actions, "Fix JS201: Replace with `jnp.where(...)`")
    assert fix.edit is not None and fix.edit.changes is not None
    assert sorted(e.new_text for e in fix.edit.changes[uri]) == [
        "import jax.numpy as jnp\r\n", "y = jnp.where(x > 0, x * 2, x * 3)"
    ]
    assert [e.range.start for e in sorted(fix.edit.changes[uri], key=lambda e: e.new_text)] == [
        lsp.Position(1, 0), lsp.Position(4, 4)
    ]


def test_the_modules_a_file_imports_count_as_in_a_lint_of_the_tree(tmp_path: Path) -> None:
    """`trainable` is a meta field of a class registered in params.py: static, as jitscope lint of the tree
    says; the editor agrees, and follows params.py's unsaved edits."""
    from tests.lsp.test_lsp_neighbours import PARAMS, USE

    folder = _project(tmp_path, files={"pkg/__init__.py": "", "pkg/params.py": PARAMS, "pkg/use.py": USE})

    async def scenario() -> None:
        async with session(folder) as s:
            use = s.open("pkg/use.py", USE)
            assert [(d.range.start.line, d.code) for d in await s.diagnostics(use)] == [(12, "JS201")]
            s.open("pkg/params.py", PARAMS.replace('meta_fields=["trainable"]', "meta_fields=[]"))
            s.save(use)
            assert [(d.range.start.line, d.code) for d in await s.diagnostics(use)] == [(7, "JS201"), (12, "JS201")]

    _run(scenario())


def test_untitled_buffers_are_linted_and_other_languages_are_not(tmp_path: Path) -> None:
    folder = _project(tmp_path)

    async def scenario() -> None:
        async with session(folder) as s:
            s.client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
                uri="untitled:Untitled-1", language_id="markdown", version=1, text=HAZARD)))
            s.client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
                uri="untitled:Untitled-2", language_id="python", version=1, text=HAZARD)))
            assert [d.code for d in await s.diagnostics("untitled:Untitled-2")] == ["JS101"]
            # Messages are handled in order: the Markdown buffer, opened first, got nothing.
            assert s.published_for == ["untitled:Untitled-2"]
            hover = await s.hover("untitled:Untitled-2", 5, 6)
            assert hover is not None

    _run(scenario())
