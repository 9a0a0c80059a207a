"""JSON output: every report is ``to_jsonable(record)`` with a schema version and a kind."""

from __future__ import annotations

import json
from typing import Any

from jitscope import __version__
from jitscope.model.common import to_jsonable
from jitscope.model.lint import LintReport


def dumps(record: Any) -> str:
    """A stable, indented JSON document for ``record`` (keys in field order, NaN as null)."""
    return json.dumps(to_jsonable(record), indent=2, allow_nan=False)


def report_summary(report: LintReport) -> dict[str, Any]:
    counts = report.counts()
    return {
        "total": len(report.findings),
        **counts,
        "files_checked": report.files_checked,
        "lines_checked": report.lines_checked,
        "suppressed": report.suppressed,
        "skipped": len(report.skipped),
        "fail_on": report.fail_on,
        "failed": report.failed,
    }


def render_lint_json(report: LintReport) -> str:
    """The report as one JSON document: every ``LintReport`` field, plus ``tool`` and ``summary``.

    ``from_jsonable(LintReport, json.loads(text))`` reads it back (the extra keys are ignored).
    """
    data = to_jsonable(report)
    document = {
        "schema_version": data.pop("schema_version"),
        "kind": data.pop("kind"),
        "tool": {"name": "jitscope", "version": __version__},
        "summary": report_summary(report),
        **data,
    }
    return json.dumps(document, indent=2, allow_nan=False)
