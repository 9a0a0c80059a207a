"""``jitscope lint`` results as a view model: findings grouped by file, each with its code frame and
suggestion, then the docs of every rule that fired (folded)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby

from jitscope.model.lint import SEVERITIES, Finding, LintReport
from jitscope.userframes import read_source_lines
from jitscope.view.format import plural
from jitscope.view.model import (
    Block,
    CodeLine,
    CodeListing,
    Column,
    Document,
    Note,
    Paragraph,
    Section,
    Table,
)

#: Lines of source shown above and below the flagged line.
CONTEXT_LINES = 2
_LEVEL = {"error": "error", "warning": "warning", "info": "info"}


def summary_line(report: LintReport) -> str:
    files = f"{plural(report.files_checked, 'file')} ({plural(report.lines_checked, 'line')})"
    extra = f"; {report.suppressed:,} suppressed" if report.suppressed else ""
    if not report.findings:
        return f"All checks passed: {files} checked{extra}."
    counts = report.counts()
    parts = ", ".join(plural(counts[s], s) for s in reversed(SEVERITIES) if counts.get(s))
    return f"Found {plural(len(report.findings), 'finding')} ({parts}) in {files}{extra}."


def code_frame(finding: Finding, lines: Sequence[str]) -> CodeListing | None:
    if not 1 <= finding.line <= len(lines):
        return None
    first, last = max(1, finding.line - CONTEXT_LINES), min(len(lines), finding.line + CONTEXT_LINES)
    return CodeListing(tuple(CodeLine(((lines[n - 1].rstrip().expandtabs(4), ""),), number=n, mark=n == finding.line)
                             for n in range(first, last + 1)), "python")


def finding_blocks(finding: Finding, lines: Sequence[str]) -> list[Block]:
    head = Paragraph(((f"{finding.line}:{finding.column} ", "jitscope.path"), (finding.code, "lint.code"),
                      (" ", ""), (f"[{finding.severity}]", f"lint.{finding.severity}"), (" ", ""),
                      (finding.message, ""),
                      (" (observed while tracing)" if finding.source == "dynamic" else "", "jitscope.muted")))
    blocks: list[Block] = [head]
    frame = code_frame(finding, lines)
    if frame is not None:
        blocks.append(frame)
    if finding.suggestion:
        blocks.append(Note(finding.suggestion, "good", "help"))
    return blocks


def lint_document(report: LintReport, read_lines: Callable[[str], Sequence[str]] = read_source_lines) -> Document:
    blocks: list[Block] = [Note(summary_line(report), "error" if report.failed else "good")]
    for path, group in groupby(sorted(report.findings, key=Finding.sort_key), key=lambda f: f.file):
        findings = list(group)
        lines = read_lines(path)
        body: list[Block] = []
        for finding in findings:
            body += finding_blocks(finding, lines)
        blocks.append(Section(path, tuple(body), plural(len(findings), "finding"), level=1, id=f"file-{path}"))
    if report.statistics:
        rows = tuple((f"{s.count:,}", s.code, s.name, s.severity)
                     for s in sorted(report.statistics, key=lambda s: (-s.count, s.code)))
        blocks.append(Section("findings per rule", (Table((Column("count", "right"), Column("code"), Column("name"),
                                                             Column("severity")), rows),), id="statistics"))
    fired = {f.code for f in report.findings}
    docs = [Section(f"{r.code} {r.name}", (Paragraph(((r.docs, ""),), preformatted=True),), r.severity,
                    collapsed=True, id=f"rule-{r.code}") for r in report.rules if r.code in fired]
    if docs:
        blocks.append(Section("rules", tuple(docs), "what each rule that fired checks, and why", id="rules"))
    title = "jitscope lint" + (f": {plural(len(report.findings), 'finding')}" if report.findings else "")
    return Document(title, "lint", tuple(blocks), meta=(("files", f"{report.files_checked:,}"),
                                                        ("fail on", report.fail_on)))
