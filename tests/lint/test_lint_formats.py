"""Output formats: text (code frames, summary, statistics), JSON, SARIF 2.1.0, GitHub annotations."""

from __future__ import annotations

import io
import json
import re

import pytest

from jitscope.linter.registry import find_rule, rule_infos
from jitscope.model.common import SCHEMA_VERSION, from_jsonable
from jitscope.model.lint import Finding, LintReport, RuleStat, Severity
from jitscope.report.views.document import Paragraph
from jitscope.report.views.lint import lint_document, summary_pieces
from jitscope.report.writers.console import plain_console
from jitscope.report.writers.github import render_github
from jitscope.report.writers.json import render_lint_json as render_json
from jitscope.report.writers.rule_docs import RuleListView, render_rule_doc
from jitscope.report.writers.sarif import render_sarif
from jitscope.report.writers.terminal import render_block, render_rich

SOURCE = ["import jax", "@jax.jit", "def step(x):", "    print(x, 'a,b:c')", "    return x"]


def _finding(**kw: object) -> Finding:
    base = {
        "code": "JS101",
        "name": "print-in-traced-code",
        "message": "print() in `step` runs only while tracing",
        "severity": "warning",
        "file": "pkg/mod.py",
        "line": 4,
        "column": 5,
        "end_line": 4,
        "end_column": 25,
        "function": "step",
        "suggestion": "use jax.debug.print",
        "source": "static",
    }
    base.update(kw)
    return Finding(**base)  # type: ignore[arg-type]


def _report(findings: tuple[Finding, ...], fail_on: Severity = "warning") -> LintReport:
    rules = tuple({f.code: find_rule(f.code).info() for f in findings}.values())  # type: ignore[union-attr]
    stats = tuple(
        RuleStat(r.code, r.name, r.severity, sum(f.code == r.code for f in findings)) for r in rules
    )
    return LintReport(
        findings,
        files_checked=3,
        lines_checked=120,
        statistics=stats,
        rules=rules,
        fail_on=fail_on,
        suppressed=1,
    )


REPORT = _report(
    (
        _finding(),
        _finding(
            code="JS201",
            name="traced-control-flow",
            severity="error",
            line=5,
            column=12,
            end_column=13,
            message="Python if, on: traced",
        ),
    )
)


def _text(renderable: object, width: int = 100) -> str:
    buf = io.StringIO()
    plain_console(buf, width=width).print(renderable)
    return buf.getvalue()


def test_text_has_location_code_frame_and_help() -> None:
    out = _text(render_rich(lint_document(REPORT, lambda _: SOURCE, layout="flat", statistics=True)))
    assert "pkg/mod.py:4:5: JS101 [warning] print() in `step` runs only while tracing" in out
    assert " > 4 │     print(x, 'a,b:c')" in out
    assert "   │     " + "^" * 20 in out
    assert "help: use jax.debug.print" in out
    assert re.search(r"1\s+JS101\s+print-in-traced-code\s+warning", out)
    assert out.rstrip().endswith(
        "Found 2 findings (1 error, 1 warning) in 3 files (120 lines); 1 suppressed."
    )


def test_text_without_source_and_clean_summary() -> None:
    out = _text(render_rich(lint_document(REPORT, lambda _: SOURCE, layout="flat", show_source=False)))
    assert "│" not in out
    clean = _report(())
    assert (
        _text(render_block(Paragraph(summary_pieces(clean)))).strip() == "All checks passed: 3 files (120 lines) checked; 1 suppressed."
    )


def test_json_schema_and_round_trip() -> None:
    data = json.loads(render_json(REPORT))
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["kind"] == "jitscope.lint"
    assert data["tool"]["name"] == "jitscope"
    assert data["summary"] == {
        "total": 2,
        "info": 0,
        "warning": 1,
        "error": 1,
        "files_checked": 3,
        "lines_checked": 120,
        "suppressed": 1,
        "skipped": 0,
        "fail_on": "warning",
        "failed": True,
    }
    keys = {
        "code",
        "name",
        "message",
        "severity",
        "file",
        "line",
        "column",
        "end_line",
        "end_column",
        "function",
        "suggestion",
        "source",
    }
    assert all(set(f) == keys for f in data["findings"])
    assert [s["code"] for s in data["statistics"]] == ["JS101", "JS201"]
    assert from_jsonable(LintReport, data) == REPORT


def test_sarif_structure() -> None:
    doc = json.loads(render_sarif(REPORT))
    assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"]
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "jitscope"
    assert [r["id"] for r in driver["rules"]] == ["JS101", "JS201"]
    assert all(
        {"id", "name", "shortDescription", "help", "defaultConfiguration"} <= set(r) for r in driver["rules"]
    )
    first, second = run["results"]
    assert first["ruleId"] == "JS101" and first["ruleIndex"] == 0 and first["level"] == "warning"
    assert second["level"] == "error"
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "pkg/mod.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 25}
    assert first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "step"


def test_sarif_absolute_paths_are_file_uris() -> None:
    doc = json.loads(render_sarif(_report((_finding(file="/abs/mod.py"),))))
    artifact = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "file:///abs/mod.py"}


def test_github_annotations() -> None:
    lines = render_github(REPORT).splitlines()
    assert lines[0] == (
        "::warning file=pkg/mod.py,line=4,col=5,endLine=4,endColumn=25,title=JS101 print-in-traced-code::"
        "print() in `step` runs only while tracing (use jax.debug.print)"
    )
    pattern = re.compile(
        r"^::(error|warning|notice) file=[^,]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=[^:]+::.+$"
    )
    assert all(pattern.match(line) for line in lines)
    assert lines[1].startswith("::error ") and "Python if, on: traced" in lines[1]


@pytest.mark.parametrize(("raw", "escaped"), [("a%b", "a%25b"), ("x\ny", "x%0Ay")])
def test_github_escaping(raw: str, escaped: str) -> None:
    out = render_github(_report((_finding(message=raw, suggestion=""),)))
    assert out.strip().endswith("::" + escaped)


def test_rule_list_and_doc() -> None:
    listing = _text(RuleListView(rule_infos()), width=200)
    assert re.search(r"JS101\s+print-in-traced-code\s+warning", listing)
    assert "JS306" in listing and "dynamic" in listing
    doc = _text(render_rule_doc(find_rule("JS201").info(), markdown=False))  # type: ignore[union-attr]
    assert doc.startswith("JS201 traced-control-flow  [error]")
    for heading in ("What it does", "Why is this bad?", "Example", "Use instead"):
        assert heading in doc
