"""Code actions on findings.

- A quick fix per finding that has a safe fix (:mod:`jitscope.linter.fixes`, what ``jitscope lint --fix``
  applies): ``print`` -> ``jax.debug.print``, an ``if`` on a traced value -> ``jnp.where``, ``x[i] = v`` ->
  ``x = x.at[i].set(v)``; marked preferred, so an editor's "auto fix" takes it.
- A quick fix per finding: ``# jitscope: ignore[CODE]`` on its line (:mod:`.edits`).
- ``source.fixAll.jitscope``: every safe fix in the file, round by round as ``--fix`` does (VS Code runs it
  on save with ``"editor.codeActionsOnSave": {"source.fixAll": "explicit"}``).
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types as lsp

from jitscope.lsp.buffers import Linted
from jitscope.lsp.edits import newline_of, suppression_edit
from jitscope.lsp.protocol import ClientText, covers
from jitscope.model.lint import Finding, Fix

#: The kind of the action that applies every safe fix in the file.
FIX_ALL = f"{lsp.CodeActionKind.SourceFixAll.value}.jitscope"
#: The kinds of action the server offers (advertised in its capabilities).
KINDS = (lsp.CodeActionKind.QuickFix, FIX_ALL)


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether a request asking for ``only`` kinds (None: any) takes ``kind``; kinds are hierarchical:
    asking for ``source`` covers ``source.fixAll.jitscope``."""
    return not only or any(not asked or kind == asked or kind.startswith(asked + ".") for asked in only)


def code_actions(
    uri: str, linted: Linted, text: ClientText, at: lsp.Range, only: Sequence[str] | None
) -> list[lsp.CodeAction]:
    """The actions for the findings that touch ``at``, and the file's fix-all where it has fixes."""
    actions: list[lsp.CodeAction] = []
    if wanted(lsp.CodeActionKind.QuickFix, only):
        start, end = text.finding_position(at.start), text.finding_position(at.end)
        touched = [f for f in linted.findings if covers(f, start, end)]
        actions += [_fix_action(uri, f, f.fix, linted, text) for f in touched if f.fix is not None]
        actions += _suppressions(uri, touched, linted, text)
    if wanted(FIX_ALL, only) and any(f.fix is not None for f in linted.findings):
        fixed, count = linted.fixed()
        if count:
            actions.append(lsp.CodeAction(
                title=f"Apply every safe jitscope fix in this file ({count})",
                kind=FIX_ALL,
                edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(range=text.whole(), new_text=fixed)]}),
            ))
    return actions


def _fix_action(uri: str, finding: Finding, fix: Fix, linted: Linted, text: ClientText) -> lsp.CodeAction:
    newline = newline_of(linted.text)
    edits = [lsp.TextEdit(range=text.span(e.line, e.column, e.end_line, e.end_column),
                          new_text=e.text.replace("\n", newline) if newline != "\n" else e.text)
             for e in fix.edits]
    return lsp.CodeAction(
        title=f"Fix {finding.code}: {fix.title}",
        kind=lsp.CodeActionKind.QuickFix,
        is_preferred=True,
        diagnostics=[text.diagnostic(finding)],
        edit=lsp.WorkspaceEdit(changes={uri: edits}),
    )


def _suppressions(uri: str, findings: Sequence[Finding], linted: Linted, text: ClientText) -> list[lsp.CodeAction]:
    actions: dict[tuple[str, int], lsp.CodeAction] = {}
    for finding in findings:
        in_strings = linted.lines_in_strings()
        edit = None if in_strings is None else suppression_edit(finding, linted.text, in_strings)
        if edit is None:
            continue
        actions.setdefault((finding.code, edit.line), lsp.CodeAction(
            title=f"Ignore {finding.code} on this line (# jitscope: ignore[{finding.code}])",
            kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[text.diagnostic(finding)],
            edit=lsp.WorkspaceEdit(changes={uri: [text.line_edit(edit)]}),
        ))
    return list(actions.values())
