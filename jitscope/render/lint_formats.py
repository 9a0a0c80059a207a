"""Machine-readable lint output: JSON, SARIF 2.1.0 and GitHub Actions annotations.

Each renderer is ``render_*(report) -> str``; none of them imports jax or rich.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from jitscope import __version__
from jitscope.model.common import to_jsonable
from jitscope.model.lint import Finding, LintReport, RuleInfo, SkippedFile

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/jitscope/jitscope"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


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


def render_json(report: LintReport) -> str:
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


def render_sarif(report: LintReport) -> str:
    """SARIF 2.1.0 (for GitHub code scanning and other SARIF viewers)."""
    rules = list(report.rules)
    index = {rule.code: i for i, rule in enumerate(rules)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "jitscope",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_sarif_rule(rule) for rule in rules],
            }
        },
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The directory jitscope lint ran in."}}},
        "results": [_sarif_result(f, index.get(f.code)) for f in report.findings],
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [_sarif_skipped(s) for s in report.skipped],
            }
        ],
        "properties": {"filesChecked": report.files_checked, "suppressed": report.suppressed},
    }
    document = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(document, indent=2, allow_nan=False)


def _sarif_rule(rule: RuleInfo) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.summary},
        "help": {"text": rule.docs, "markdown": rule.docs},
        "defaultConfiguration": {"level": _SARIF_LEVEL.get(rule.severity, "warning")},
        "properties": {"tags": ["jax", "dynamic" if rule.dynamic_only else "static"]},
    }


def _sarif_result(finding: Finding, rule_index: int | None) -> dict[str, Any]:
    message = finding.message + (f" Suggestion: {finding.suggestion}" if finding.suggestion else "")
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": _SARIF_LEVEL.get(finding.severity, "warning"),
        "message": {"text": message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact(finding.file),
                    "region": {
                        "startLine": finding.line,
                        "startColumn": finding.column,
                        "endLine": finding.end_line,
                        "endColumn": max(finding.end_column, finding.column + 1)
                        if finding.end_line == finding.line
                        else finding.end_column,
                    },
                },
                "logicalLocations": [{"fullyQualifiedName": finding.function, "kind": "function"}],
            }
        ],
        "properties": {"source": finding.source},
    }
    if rule_index is not None:
        result["ruleIndex"] = rule_index
    return result


def _sarif_skipped(skipped: SkippedFile) -> dict[str, Any]:
    """A path lint did not read (a FIFO, a device...), as a SARIF tool notification naming it."""
    return {
        "level": "note",
        "message": {"text": f"skipped {skipped.file}: {skipped.reason}"},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(skipped.file)}}],
    }


def _artifact(path: str) -> dict[str, str]:
    """Relative paths resolve against %SRCROOT% (the checkout); absolute ones become file:// URIs.

    Either way percent-encoded (RFC 3986): a file named ``a b#c.py`` is ``a%20b%23c.py``, not a
    URI with the fragment ``c.py``, and ``p%25q.py`` is ``p%2525q.py``, which decodes back to it.
    """
    if PurePath(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": sarif_uri(path), "uriBaseId": "%SRCROOT%"}


def sarif_uri(path: str) -> str:
    """A relative path as a relative URI reference: every byte but unreserved characters and ``/``
    percent-encoded (a ``:`` in the first segment would read as a scheme), UTF-8 for the rest."""
    return quote(_posix(path), safe="/")


def _posix(path: str) -> str:
    """``path`` with ``/`` separators (a backslash is a separator only on Windows) and no leading ``./``."""
    if os.sep != "/":
        path = path.replace(os.sep, "/")
    return path.removeprefix("./")


def render_github(report: LintReport) -> str:
    """One GitHub Actions workflow command per finding (``::error file=...,line=...::message``)."""
    lines = []
    for f in report.findings:
        command = _GITHUB_COMMAND.get(f.severity, "warning")
        props = {
            "file": _posix(f.file),
            "line": str(f.line),
            "col": str(f.column),
            "endLine": str(f.end_line),
            "endColumn": str(f.end_column),
            "title": f"{f.code} {f.name}",
        }
        rendered = ",".join(f"{key}={_escape_property(value)}" for key, value in props.items())
        message = f.message + (f" ({f.suggestion})" if f.suggestion else "")
        lines.append(f"::{command} {rendered}::{_escape_data(message)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
