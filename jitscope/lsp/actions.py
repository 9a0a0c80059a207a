"""Code actions on findings: ``# jitscope: ignore[CODE]`` on the finding's line (a quick fix)."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types as lsp

from jitscope.lsp.buffers import Linted
from jitscope.lsp.edits import suppression_edit
from jitscope.lsp.protocol import ClientText, covers

#: The kinds of action the server offers (advertised in its capabilities).
KINDS = (lsp.CodeActionKind.QuickFix,)


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether a request asking for ``only`` kinds (None: any) takes ``kind``; kinds are hierarchical:
    asking for ``source`` covers ``source.fixAll.jitscope``."""
    return not only or any(not asked or kind == asked or kind.startswith(asked + ".") for asked in only)


def code_actions(
    uri: str, linted: Linted, text: ClientText, at: lsp.Range, only: Sequence[str] | None
) -> list[lsp.CodeAction]:
    """The actions for the findings that touch ``at``."""
    if not wanted(lsp.CodeActionKind.QuickFix, only):
        return []
    start, end = text.finding_position(at.start), text.finding_position(at.end)
    actions: dict[tuple[str, int], lsp.CodeAction] = {}
    for finding in linted.findings:
        if not covers(finding, start, end):
            continue
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
