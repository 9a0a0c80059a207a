"""The README's rule table is generated from the registry and must be current."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.linter.docs import END, README, START, main, render_rule_table, with_rule_table
from jitscope.linter.registry import RULES


def test_readme_rule_table_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert with_rule_table(text) == text, "README rule table is stale: run python -m jitscope.linter.docs"


def test_table_has_one_row_per_rule() -> None:
    rows = render_rule_table().splitlines()[2:]
    assert [row.split("`")[1] for row in rows] == [rule.code for rule in RULES]
    (dynamic,) = [row for row in rows if "`JS306`" in row]
    assert "(dynamic: reported by `jitscope lint --trace`)" in dynamic


def test_main_rewrites_and_checks(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{START}\n| old |\n{END}\n\nafter\n", encoding="utf-8")
    assert main([str(readme), "--check"]) == 1
    assert main([str(readme)]) == 0
    text = readme.read_text(encoding="utf-8")
    assert render_rule_table() in text and text.endswith(f"{END}\n\nafter\n")
    assert main([str(readme), "--check"]) == 0


def test_markers_required() -> None:
    with pytest.raises(ValueError, match="markers"):
        with_rule_table("no table here\n")
