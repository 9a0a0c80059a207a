"""``jitscope rule``: the rule list and one rule's documentation, for the terminal.

Not a report (reports are view models, ``report/views/lint.py``): a rule's docstring is Markdown, shown
through rich's Markdown renderer on a terminal and as written when piped.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from jitscope.model.lint import RuleInfo


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
