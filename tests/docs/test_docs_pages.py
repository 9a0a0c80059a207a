"""The reference pages docs/_ext/jitscope_docs generates from jitscope (no Sphinx needed to run these)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

from jitscope_docs import GENERATED, write_pages  # noqa: E402
from jitscope_docs.cli_pages import cli_pages, root_command  # noqa: E402
from jitscope_docs.config_keys import undocumented_lint_keys  # noqa: E402
from jitscope_docs.markdown import escape  # noqa: E402
from jitscope_docs.rule_pages import rule_pages  # noqa: E402
from jitscope_docs.schema_page import document_records, schema_pages  # noqa: E402

from jitscope.cli.commands import COMMAND_MODULES  # noqa: E402
from jitscope.linter.registry import RULES  # noqa: E402


def test_every_command_has_a_page_listing_each_visible_option() -> None:
    pages = cli_pages()
    group = root_command()
    assert list(group.commands) == list(COMMAND_MODULES)
    for name, command in group.commands.items():
        page = pages[f"reference/cli/{name}.md"]
        assert page.startswith(f"# jitscope {name}\n")
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                assert f"### `{param.opts[0]}`" in page, f"jitscope {name}: {param.opts[0]} not on its page"
        assert f"[`jitscope {name}`]({name}.md)" in pages["reference/cli/index.md"]
    trace = pages["reference/cli/trace.md"]
    # What --help says: the metavar and the default, the help text escaped (its [ ] < > are text, not markup).
    assert "### `--stages` `<str>`" in trace and "Default: `jaxpr,stablehlo,hlo,cost,memory`." in trace
    assert "### `--effects`, `--no-effects`\n\nWatch for trace-time side effects. Default: `--effects`." in trace
    assert "f32\\[8,128\\]" in trace
    assert "--no-locations" not in trace  # hidden options stay hidden


def test_pages_do_not_depend_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    narrow = cli_pages()
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert cli_pages() == narrow


def test_one_page_per_rule_from_its_class() -> None:
    pages = rule_pages()
    assert sorted(pages) == sorted(["reference/rules/index.md", *(f"reference/rules/{r.code}.md" for r in RULES)])
    index = pages["reference/rules/index.md"]
    for rule in RULES:
        page = pages[f"reference/rules/{rule.code}.md"]
        assert page.startswith(f"# {rule.code} `{rule.name}`\n")
        assert f"Default severity: **{rule.severity}**." in page
        assert "## What it does" in page and "## Why is this bad?" in page, rule.code
        assert f"[{rule.code}]({rule.code}.md) | `{rule.name}`" in index
    assert "(dynamic: `jitscope lint --trace`)" in index.split("`dynamic-recompilation`")[1]


def test_the_schema_page_lists_every_document_and_every_field() -> None:
    from jitscope.model.bench import BENCH_SCHEMA_VERSION, BenchReport, BenchRow

    kinds = {next(f.default for f in dataclasses.fields(c) if f.name == "kind") for c in document_records()}
    assert {"jitscope.trace", "jitscope.bench", "jitscope.profile", "jitscope.memory", "jitscope.diff",
            "jitscope.run", "jitscope.lint", "jitscope.merge"} <= kinds
    page = schema_pages()["reference/schemas.md"]
    assert f"| [`jitscope.bench`](#jitscope-bench) | `BenchReport` | {BENCH_SCHEMA_VERSION} |" in page
    for record in (BenchReport, BenchRow):  # a nested record gets its own table, linked from its field
        assert f"(jitscope-bench-{record.__name__.lower()})=\n### `{record.__name__}`" in page
        for field in dataclasses.fields(record):
            assert f"| `{field.name}` |" in page
    assert "[BenchRow](#jitscope-bench-benchrow)" in page


def test_an_undocumented_lint_key_is_reported() -> None:
    page = (DOCS / "reference" / "config.md").read_text(encoding="utf-8")
    assert undocumented_lint_keys(page) == []
    assert undocumented_lint_keys(page.replace("`extend-exclude`", "")) == ["extend-exclude"]


def test_escape_keeps_text_literal() -> None:
    assert escape("a <b> [c] *d* |e| {f} x_y") == r"a \<b\> \[c\] \*d\* \|e\| \{f\} x\_y"
    assert escape("`code` stays") == "`code` stays"


def test_pages_are_written_only_when_changed_and_stale_ones_removed(tmp_path: Path) -> None:
    assert write_pages(tmp_path, {"reference/rules/JS1.md": "a\n"}) == ["reference/rules/JS1.md"]
    assert write_pages(tmp_path, {"reference/rules/JS1.md": "a\n"}) == []
    (tmp_path / "reference" / "rules" / "JS999.md").write_text("gone\n")
    write_pages(tmp_path, {"reference/rules/JS1.md": "b\n"})
    assert sorted(p.name for p in (tmp_path / "reference" / "rules").iterdir()) == ["JS1.md"]
    assert "reference/rules" in GENERATED
