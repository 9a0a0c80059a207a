"""Every rule's own good and bad examples, run through the static linter."""

from __future__ import annotations

from pathlib import Path

import pytest

import jitscope.linter.rules
from jitscope.linter import lint_source
from jitscope.linter.registry import RULES
from jitscope.linter.rule import Rule

RULES_DIR = Path(jitscope.linter.rules.__file__).parent

_CASES = [
    pytest.param(rule, kind, i, src, id=f"{rule.code}-{kind}-{i}")
    for rule in RULES
    for kind, examples in (("bad", rule.bad), ("good", rule.good))
    for i, src in enumerate(examples)
]


@pytest.mark.parametrize(("rule", "kind", "index", "source"), _CASES)
def test_rule_example(rule: type[Rule], kind: str, index: int, source: str) -> None:
    codes = [f.code for f in lint_source(source, "example.py")]
    if rule.dynamic_only:
        assert rule.code not in codes  # only the tracer-based lint can report it
    elif kind == "bad":
        assert rule.code in codes, f"{rule.code} bad example {index} not flagged; got {codes}"
    else:
        assert rule.code not in codes, f"{rule.code} good example {index} flagged"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_has_docs_and_examples(rule: type[Rule]) -> None:
    docs = rule.docs()
    for heading in ("What it does", "Why is this bad?", "Example", "Use instead"):
        assert heading in docs, f"{rule.code} docstring lacks '{heading}'"
    assert rule.bad and rule.good
    assert rule.name == rule.name.lower() and " " not in rule.name and "_" not in rule.name
    assert rule.severity in ("error", "warning", "info")
    assert rule.summary


def test_registry_sorted_and_unique() -> None:
    codes = [r.code for r in RULES]
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes)
    assert len({r.name for r in RULES}) == len(RULES)


def test_one_registered_rule_per_file() -> None:
    """rules/js101_print_in_traced_code.py holds the rule JS101 print-in-traced-code, and is registered."""
    files = sorted(p.stem for p in RULES_DIR.glob("js[0-9][0-9][0-9]_*.py"))
    assert files == [f"{r.code.lower()}_{r.name.replace('-', '_')}" for r in RULES]
    for rule in RULES:
        assert rule.__module__ == f"jitscope.linter.rules.{rule.code.lower()}_{rule.name.replace('-', '_')}"
