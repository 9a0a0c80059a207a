"""Findings and edits in LSP's terms (lsprotocol's types): positions in the client's units, diagnostics.

Findings count 1-based lines and 1-based character (code point) columns, the end exclusive; LSP counts
0-based lines and columns in the units the client agreed to (:mod:`.edits` converts one column).
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types as lsp

from jitscope.lsp.edits import LineEdit, from_client, to_client
from jitscope.model.lint import Finding

#: The diagnostics' ``source``: editors show it beside each message.
SOURCE = "jitscope"

_SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}


@dataclass(frozen=True, slots=True)
class ClientText:
    """One version of a buffer's lines, and the position encoding agreed with the client."""

    lines: list[str]
    encoding: str = "utf-16"

    def position(self, line: int, column: int) -> lsp.Position:
        """0-based line and code-point column -> the client's position."""
        text = self.lines[line] if 0 <= line < len(self.lines) else ""
        return lsp.Position(line=max(line, 0), character=to_client(text, max(column, 0), self.encoding))

    def finding_position(self, position: lsp.Position) -> tuple[int, int]:
        """The client's position -> 1-based line and column in code points, as findings count them."""
        text = self.lines[position.line] if 0 <= position.line < len(self.lines) else ""
        return position.line + 1, from_client(text, position.character, self.encoding) + 1

    def span(self, line: int, column: int, end_line: int, end_column: int) -> lsp.Range:
        """A range given as findings give one (1-based, the end exclusive)."""
        return lsp.Range(start=self.position(line - 1, column - 1), end=self.position(end_line - 1, end_column - 1))

    def range_of(self, finding: Finding) -> lsp.Range:
        return self.span(finding.line, finding.column, finding.end_line, finding.end_column)

    def whole(self) -> lsp.Range:
        """From the start of the buffer to its end."""
        last = len(self.lines) - 1
        return lsp.Range(start=lsp.Position(0, 0), end=self.position(last, len(self.lines[last]) if last >= 0 else 0))

    def line_edit(self, edit: LineEdit) -> lsp.TextEdit:
        return lsp.TextEdit(
            range=lsp.Range(start=self.position(edit.line, edit.start), end=self.position(edit.line, edit.end)),
            new_text=edit.text,
        )

    def diagnostic(self, finding: Finding) -> lsp.Diagnostic:
        """The finding as a diagnostic: its code, range and severity; the suggestion under the message."""
        message = finding.message + (f"\nhelp: {finding.suggestion}" if finding.suggestion else "")
        return lsp.Diagnostic(
            range=self.range_of(finding),
            message=message,
            severity=_SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Error),
            code=finding.code,
            source=SOURCE,
            data={"name": finding.name},
        )


def covers(finding: Finding, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Whether the finding's span touches the range ``start``..``end`` (1-based lines and columns, both ends
    included: a cursor just after the flagged code is on it)."""
    return (finding.line, finding.column) <= end and start <= (finding.end_line, finding.end_column)
