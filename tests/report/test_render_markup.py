"""User and rule text reaches rich as Text, never as markup: brackets such as ``x[i]`` survive."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from jitscope.errors import SpecError
from jitscope.linter.registry import rule_infos
from jitscope.model.trace import SeenArg, TraceRecord
from jitscope.report.views.trace import seen_section
from jitscope.report.writers.rule_docs import RuleListView
from jitscope.report.writers.terminal import render_block
from jitscope.report.writers.theme import THEME


def _text(renderable, width: int = 200) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, theme=THEME)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())


def test_rule_list_keeps_brackets_in_summaries():
    out = _text(RuleListView(rule_infos()))
    js204 = next(line for line in out.splitlines() if line.startswith("JS204"))
    assert js204.split("error", 1)[1].strip() == "x[i] = v on a JAX array raises TypeError; use x.at[i].set(v)"
    assert "[dynamic: --trace]" in next(line for line in out.splitlines() if line.startswith("JS306"))


def test_seen_table_keeps_user_paths_and_reprs():
    record = TraceRecord(
        target="m.py:f", how="", call="", body_runs=1, trace_seconds=0.0,
        seen=(
            SeenArg("params['[b]']", "traced", "DynamicJaxprTracer", (2,), "f32"),
            SeenArg("mode", "static", "str", value_repr="'[bold]x[/]'"),
        ),
    )
    out = _text(render_block(seen_section(record)))
    assert "params['[b]']" in out and "'[bold]x[/]'" in out


def test_error_line_keeps_brackets(capsys: pytest.CaptureFixture[str]):
    from jitscope.cli.app import report_error

    report_error(SpecError("bad --shapes at column 7: f32[i] is not a shape", hint="write f32[8]"))
    assert capsys.readouterr().err == "error: bad --shapes at column 7: f32[i] is not a shape (write f32[8])\n"


def test_progress_descriptions_are_plain_text():
    from jitscope.report.writers.progress import progress_bar

    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None, _environ={})
    with progress_bar(console) as update:
        update(0, 2, "tracing f(f32[8], mode='[bold]')")
    assert "tracing f(f32[8], mode='[bold]')" in console.file.getvalue()
