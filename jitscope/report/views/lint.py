"""``jitscope lint`` results as a view model: findings grouped by file, each with its code frame and
suggestion, then the docs of every rule that fired (folded); for the terminal, the grep-friendly flat list."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby
from typing import Literal

from jitscope.model.lint import SEVERITIES, Finding, LintReport
from jitscope.report.views.document import (
    Block,
    CodeLine,
    CodeListing,
    Column,
    Document,
    Note,
    Paragraph,
    Pieces,
    Section,
    Table,
    pieces,
    plain,
)
from jitscope.units import plural
from jitscope.userframes import read_source_lines

#: Lines of source shown above and below the flagged line: in a report, and in the terminal's list.
CONTEXT_LINES = 2
FLAT_CONTEXT_LINES = 1
#: Characters of one source line quoted at most (a generated file can have a megabyte on one line).
MAX_QUOTED = 160
Layout = Literal["grouped", "flat"]


def _counts(report: LintReport) -> Pieces:
    counts = report.counts()
    parts = [(plural(counts[s], s), f"lint.{s}") for s in reversed(SEVERITIES) if counts.get(s)]
    return tuple(piece for i, part in enumerate(parts) for piece in (((", ", ""),) if i else ()) + (part,))


def summary_pieces(report: LintReport) -> Pieces:
    """``Found 3 findings (2 errors, 1 warning) in 5 files (1,234 lines).`` or ``All checks passed...``,
    the counts coloured by severity."""
    files = f"{plural(report.files_checked, 'file')} ({plural(report.lines_checked, 'line')})"
    extra = f"; {report.suppressed:,} suppressed" if report.suppressed else ""
    if not report.findings:
        return (("All checks passed", "jitscope.good"), (f": {files} checked{extra}.", ""))
    return ((f"Found {plural(len(report.findings), 'finding')} (", ""), *_counts(report),
            (f") in {files}{extra}.", ""))


def summary_line(report: LintReport) -> str:
    return plain(summary_pieces(report))


def code_frame(finding: Finding, lines: Sequence[str], context: int = CONTEXT_LINES, indent: int = 0) -> CodeListing | None:
    """The flagged line between ``context`` lines of source, its column span underlined; a line longer
    than ``MAX_QUOTED`` characters is cut to that many around the span."""
    if not 1 <= finding.line <= len(lines):
        return None
    first, last = max(1, finding.line - context), min(len(lines), finding.line + context)
    frame = []
    for n in range(first, last + 1):
        text = lines[n - 1]
        underline = None
        if n == finding.line:
            start = max(finding.column - 1, 0)
            end = finding.end_column - 1 if finding.end_line == finding.line else max(len(text), start + 1)
            text, shift, cut = clip_line(text, start)
            underline = (start - shift, min(end - shift, len(text)) if cut else end - shift)
        else:
            text, _, _ = clip_line(text, 0)
        frame.append(CodeLine(((text, ""),), number=n, mark=n == finding.line, underline=underline,
                              underline_style=f"lint.{finding.severity}"))
    return CodeListing(tuple(frame), "python", indent=indent)


def clip_line(text: str, at: int, limit: int = MAX_QUOTED) -> tuple[str, int, bool]:
    """``text`` (trailing space dropped, tabs expanded) cut to ``limit`` characters that show column ``at``,
    ``…`` standing for what was cut; how many characters fewer the cut text has before ``at``; and whether
    it was cut."""
    text = text.rstrip()
    if len(text) <= limit:
        return text.expandtabs(4), 0, False
    start = max(0, min(at - limit // 4, len(text) - limit))
    end = start + limit
    shown = ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
    return shown.expandtabs(4), start - (1 if start else 0), True


def _head(finding: Finding, path: bool) -> Paragraph:
    """``path:line:col: CODE [severity] message`` (grep-friendly); ``line:col`` under a file's heading."""
    where = f"{finding.file}:{finding.line}:{finding.column}:" if path else f"{finding.line}:{finding.column}"
    return Paragraph(((where, "jitscope.path"), (" ", ""), (finding.code, "lint.code"), (" ", ""),
                      (f"[{finding.severity}]", f"lint.{finding.severity}"), (" ", ""), (finding.message, ""),
                      (" (observed while tracing)" if finding.source == "dynamic" else "", "jitscope.muted")))


def finding_blocks(finding: Finding, lines: Sequence[str], layout: Layout = "grouped") -> list[Block]:
    flat = layout == "flat"
    blocks: list[Block] = [_head(finding, path=flat)]
    frame = code_frame(finding, lines, FLAT_CONTEXT_LINES if flat else CONTEXT_LINES, indent=1 if flat else 0)
    if frame is not None:
        blocks.append(frame)
    if finding.suggestion:
        blocks.append(Paragraph((("   help: ", "jitscope.muted"), (finding.suggestion, ""))) if flat
                      else Note(finding.suggestion, "good", "help"))
    return blocks


def statistics_section(report: LintReport) -> Section:
    rows = tuple((pieces(f"{s.count:,}", "jitscope.number"), pieces(s.code, "lint.code"), s.name,
                  pieces(s.severity, f"lint.{s.severity}"))
                 for s in sorted(report.statistics, key=lambda s: (-s.count, s.code)))
    return Section("findings per rule", (Table((Column("count", "right"), Column("code"), Column("name"),
                                                Column("severity")), rows),), id="statistics")


def lint_document(report: LintReport, read_lines: Callable[[str], Sequence[str]] = read_source_lines, *,
                  layout: Layout = "grouped", show_source: bool = True, statistics: bool = True) -> Document:
    """The report: ``grouped`` (HTML, Markdown) puts the summary first, findings under their file's
    heading and the docs of every rule that fired at the end; ``flat`` (the terminal) lists each
    finding with its full ``path:line:col:``, one blank line apart, and ends with the summary line,
    which stands for the title: like other linters' output it is read by people, grep and editors,
    and a clean run is one line."""
    title = "jitscope lint" + (f": {plural(len(report.findings), 'finding')}" if report.findings else "")
    meta = (("files", f"{report.files_checked:,}"), ("fail on", report.fail_on))
    cache: dict[str, Sequence[str]] = {}

    def source(path: str) -> Sequence[str]:
        if not show_source:
            return ()
        if path not in cache:
            cache[path] = read_lines(path)
        return cache[path]

    stats = [statistics_section(report)] if statistics and report.statistics else []
    if layout == "flat":
        flat: list[Block] = [Section("", tuple(finding_blocks(f, source(f.file), "flat"))) for f in report.findings]
        return Document("", "lint", (*flat, *stats, Paragraph(summary_pieces(report))), meta=meta)
    blocks: list[Block] = [Note(summary_line(report), "error" if report.failed else "good")]
    for path, group in groupby(sorted(report.findings, key=Finding.sort_key), key=lambda f: f.file):
        findings = list(group)
        body = [block for finding in findings for block in finding_blocks(finding, source(path))]
        blocks.append(Section(path, tuple(body), plural(len(findings), "finding"), level=1, id=f"file-{path}"))
    blocks += stats
    fired = {f.code for f in report.findings}
    docs = [Section(f"{r.code} {r.name}", (Paragraph(((r.docs, ""),), preformatted=True),), r.severity,
                    collapsed=True, id=f"rule-{r.code}") for r in report.rules if r.code in fired]
    if docs:
        blocks.append(Section("rules", tuple(docs), "what each rule that fired checks, and why", id="rules"))
    return Document(title, "lint", tuple(blocks), meta=meta)
