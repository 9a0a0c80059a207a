"""``jitscope rule``: list the lint rules, or print one rule's documentation."""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated

import typer

from jitscope.errors import UsageError


class RuleFormat(str, Enum):
    text = "text"
    json = "json"


def rule(
    key: Annotated[
        str | None,
        typer.Argument(
            help="A code (JS101) or name (print-in-traced-code); omit to list every rule.", show_default=False
        ),
    ] = None,
    fmt: Annotated[
        RuleFormat, typer.Option("--format", "-f", help="text, or JSON records.")
    ] = RuleFormat.text,
) -> None:
    """List the lint rules, or show the documentation of one."""
    from jitscope.linter.registry import find_rule, rule_infos, suggest
    from jitscope.model.common import to_jsonable
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.rule_docs import RuleListView, render_rule_doc

    console = make_console()
    if key is None:
        infos = rule_infos()
        if fmt is RuleFormat.json:
            console.file.write(json.dumps(to_jsonable(infos), indent=2) + "\n")
        else:
            console.print(RuleListView(infos))
        return
    found = find_rule(key)
    if found is None:
        close = suggest(key)
        raise UsageError(
            f"unknown rule '{key}'", hint=f"did you mean {close}?" if close else "run `jitscope rule`"
        )
    info = found.info()
    if fmt is RuleFormat.json:
        console.file.write(json.dumps(to_jsonable(info), indent=2) + "\n")
    else:
        console.print(render_rule_doc(info, markdown=console.is_terminal))


def register(app: typer.Typer) -> None:
    app.command("rule")(rule)
