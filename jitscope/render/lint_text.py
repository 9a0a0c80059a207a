"""Render lint results for people: a code frame per finding, summary counts, ``--statistics``,
and the rule list / rule docs of ``jitscope rule``.

Rich renderables built from records only. On a colourless console (pipes, NO_COLOR,
tests) they print as plain text whose first line per finding is the grep-friendly
``path:line:col: CODE [severity] message``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from jitscope.model.lint import SEVERITIES, Finding, LintReport, RuleInfo
from jitscope.userframes import read_source_lines

#: Lines of source shown above and below the flagged line.
CONTEXT_LINES = 1

LineReader = Callable[[str], Sequence[str]]


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def summary_text(report: LintReport) -> Text:
    """``Found 3 findings (2 errors, 1 warning) in 5 files (1,234 lines).`` or ``All checks passed``."""
    files = f"{_plural(report.files_checked, 'file')} ({_plural(report.lines_checked, 'line')})"
    extra = f"; {report.suppressed:,} suppressed" if report.suppressed else ""
    if not report.findings:
        return Text.assemble(("All checks passed", "jitscope.good"), f": {files} checked{extra}.")
    counts = report.counts()
    parts = [Text(_plural(counts[s], s), style=f"lint.{s}") for s in reversed(SEVERITIES) if counts.get(s)]
    text = Text(f"Found {_plural(len(report.findings), 'finding')} (")
    text.append_text(Text(", ").join(parts))
    text.append(f") in {files}{extra}.")
    return text


class FindingView:
    """One finding: a ``path:line:col: CODE [severity] message`` line, the code frame, the hint."""

    def __init__(self, finding: Finding, lines: Sequence[str], show_source: bool = True) -> None:
        self.finding = finding
        self.lines = lines
        self.show_source = show_source

    def header(self) -> Text:
        f = self.finding
        text = Text()
        text.append(f"{f.file}:{f.line}:{f.column}:", style="jitscope.path")
        text.append(" ")
        text.append(f.code, style="lint.code")
        text.append(" ")
        text.append(f"[{f.severity}]", style=f"lint.{f.severity}")
        text.append(" ")
        text.append(f.message)
        if f.source == "dynamic":
            text.append(" (observed while tracing)", style="jitscope.muted")
        return text

    def frame(self) -> Iterator[Text]:
        f = self.finding
        if not self.show_source or not (1 <= f.line <= len(self.lines)):
            return
        first = max(1, f.line - CONTEXT_LINES)
        last = min(len(self.lines), f.line + CONTEXT_LINES)
        width = len(str(last))
        for number in range(first, last + 1):
            marker = ">" if number == f.line else " "
            source = self.lines[number - 1].rstrip().expandtabs(4)
            yield Text.assemble((f" {marker} {number:>{width}} │ ", "jitscope.muted"), source)
            if number == f.line:
                start = max(f.column - 1, 0)
                end = f.end_column - 1 if f.end_line == f.line else len(source)
                carets = "^" * max(end - start, 1)
                yield Text.assemble(
                    (f"   {'':>{width}} │ ", "jitscope.muted"), " " * start, (carets, f"lint.{f.severity}")
                )

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.header()
        yield from self.frame()
        if self.finding.suggestion:
            yield Text.assemble(("   help: ", "jitscope.muted"), self.finding.suggestion)


class StatisticsView:
    """``--statistics``: findings per rule, most frequent first."""

    def __init__(self, report: LintReport) -> None:
        self.report = report

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(box=None, show_edge=False, pad_edge=False, header_style="jitscope.heading")
        table.add_column("count", justify="right")
        table.add_column("code")
        table.add_column("name")
        table.add_column("severity")
        for stat in sorted(self.report.statistics, key=lambda s: (-s.count, s.code)):
            table.add_row(
                Text(f"{stat.count:,}", style="jitscope.number"),
                Text(stat.code, style="lint.code"),
                Text(stat.name),
                Text(stat.severity, style=f"lint.{stat.severity}"),
            )
        yield table


class LintTextView:
    """The whole text report: every finding with its frame, then statistics and the summary."""

    def __init__(
        self,
        report: LintReport,
        *,
        show_source: bool = True,
        statistics: bool = False,
        read_lines: LineReader = read_source_lines,
    ) -> None:
        self.report = report
        self.show_source = show_source
        self.statistics = statistics
        self.read_lines = read_lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        cache: dict[str, Sequence[str]] = {}
        for finding in self.report.findings:
            lines = cache.get(finding.file)
            if lines is None:
                lines = self.read_lines(finding.file) if self.show_source else ()
                cache[finding.file] = lines
            yield FindingView(finding, lines, self.show_source)
            yield Text()
        if self.statistics and self.report.statistics:
            yield StatisticsView(self.report)
            yield Text()
        yield summary_text(self.report)


def render_lint_text(
    report: LintReport, *, show_source: bool = True, statistics: bool = False
) -> RenderableType:
    return LintTextView(report, show_source=show_source, statistics=statistics)


# -- jitscope rule -------------------------------------------------------------------------------


class RuleListView:
    """``jitscope rule``: every rule with its code, name, severity and summary."""

    def __init__(self, rules: Sequence[RuleInfo]) -> None:
        self.rules = rules

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(box=None, show_edge=False, pad_edge=False, header_style="jitscope.heading")
        table.add_column("code", no_wrap=True)
        table.add_column("name", no_wrap=True)
        table.add_column("severity", no_wrap=True)
        table.add_column("summary")
        for rule in self.rules:
            # Text, never str: a str cell is rich markup, which would eat "x.at[i]" and "[dynamic: --trace]".
            summary = Text(rule.summary)
            if rule.dynamic_only:
                summary.append("  [dynamic: --trace]", style="jitscope.muted")
            table.add_row(
                Text(rule.code, style="lint.code"),
                Text(rule.name),
                Text(rule.severity, style=f"lint.{rule.severity}"),
                summary,
            )
        yield table


def render_rule_doc(rule: RuleInfo, markdown: bool) -> RenderableType:
    """``jitscope rule JS101``: a title line, then the rule's docstring (as Markdown on a terminal)."""
    title = Text.assemble(
        (rule.code, "lint.code"),
        " ",
        (rule.name, "jitscope.title"),
        "  ",
        (f"[{rule.severity}]", f"lint.{rule.severity}"),
        ("  (dynamic: checked by `jitscope lint --trace`)" if rule.dynamic_only else "", "jitscope.muted"),
    )
    if markdown:
        from rich.markdown import Markdown  # imported here: it costs 30 ms at start-up

        body: RenderableType = Markdown(rule.docs)
    else:
        body = Text(rule.docs)
    return Group(title, Text(), body)
