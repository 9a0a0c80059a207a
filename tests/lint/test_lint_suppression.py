"""Suppression comments, handled once in the engine for static and extra (dynamic) findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.config import LintConfig
from jitscope.linter import lint_paths, make_finding
from jitscope.linter.suppression import ALL, codes_on_line
from jitscope.model.lint import Finding
from tests.lint.helpers import codes

BODY = "import jax\n@jax.jit\ndef f(x):\n    print(x){comment}\n    return x\n"


@pytest.mark.parametrize(
    ("comment", "suppressed"),
    [
        ("", False),
        ("  # jitscope: ignore[JS101]", True),
        ("  # jitscope: ignore[JS1]", True),
        ("  # jitscope: ignore[JS201, JS101]", True),
        ("  # jitscope: ignore", True),
        ("  # jitscope: ignore[JS201]", False),
        ("  # noqa: JS101", True),
        ("  # noqa: E501, JS101", True),
        ("  # noqa", True),
        ("  # noqa: E501", False),
        ("  # NOQA:JS101", True),
    ],
)
def test_comment_on_the_line(comment: str, suppressed: bool) -> None:
    assert ("JS101" not in codes(BODY.format(comment=comment))) is suppressed


def test_comment_on_last_line_of_multiline_call() -> None:
    source = "import jax\n@jax.jit\ndef f(x):\n    print(\n        x,\n    )  # jitscope: ignore[JS101]\n    return x\n"
    assert "JS101" not in codes(source)


def test_only_that_line() -> None:
    source = "import jax\n@jax.jit\ndef f(x):\n    print(x)  # noqa: JS101\n    print(x)\n    return x\n"
    assert codes(source) == ["JS101"]


def test_codes_on_line_parsing() -> None:
    assert codes_on_line("x = 1") == frozenset()
    assert codes_on_line("x  # jitscope: ignore") is ALL
    assert codes_on_line("x  # jitscope: ignore[js101, JS2]") == {"JS101", "JS2"}
    assert codes_on_line("x  # noqa: JS101,JS102") == {"JS101", "JS102"}


def test_extra_findings_go_through_suppression_and_selection(tmp_path: Path) -> None:
    target = tmp_path / "mod.py"
    target.write_text("x = 1  # jitscope: ignore[JS306]\ny = 2\n")

    def dynamic(line: int, code: str = "JS306") -> Finding:
        return make_finding(code, "recompiled: f32[3] -> f32[4]", str(target), line, function="f")

    report = lint_paths(
        [tmp_path], LintConfig(), root=tmp_path, extra_findings=[dynamic(1), dynamic(2)], jobs=1
    )
    assert [(f.line, f.source) for f in report.findings] == [(2, "dynamic")]
    assert report.suppressed == 1
    ignored = lint_paths(
        [tmp_path], LintConfig(ignore=("JS306",)), root=tmp_path, extra_findings=[dynamic(2)], jobs=1
    )
    assert ignored.findings == ()


def test_make_finding_fills_rule_metadata() -> None:
    finding = make_finding("JS306", "recompiled", "a.py", 3, 5, function="f")
    assert (finding.name, finding.severity, finding.source) == ("dynamic-recompilation", "warning", "dynamic")
    assert (finding.end_line, finding.end_column) == (3, 6)
    with pytest.raises(ValueError):
        make_finding("JS999", "x", "a.py", 1)
