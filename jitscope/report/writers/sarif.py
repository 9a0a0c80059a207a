"""Lint findings as SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

``render_sarif(report) -> str``; imports neither jax nor rich.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from jitscope import __version__
from jitscope.model.lint import Finding, Fix, LintReport, RuleInfo, SkippedFile

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/jitscope/jitscope"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


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
    if finding.fix is not None:
        result["fixes"] = [_sarif_fix(finding.file, finding.fix)]
    return result


def _sarif_fix(path: str, fix: Fix) -> dict[str, Any]:
    """``jitscope lint --fix``'s safe rewrite as a SARIF fix (code scanning and editors can offer it)."""
    return {
        "description": {"text": fix.title},
        "artifactChanges": [{
            "artifactLocation": _artifact(path),
            "replacements": [{
                "deletedRegion": {"startLine": e.line, "startColumn": e.column,
                                  "endLine": e.end_line, "endColumn": e.end_column},
                "insertedContent": {"text": e.text},
            } for e in fix.edits],
        }],
    }


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
    percent-encoded (a ``:`` in the first segment would read as a scheme), UTF-8 for the rest. A file name
    that is not valid UTF-8 (Python holds its bytes as surrogates) keeps its own bytes: ``bad\\xff.py`` is
    ``bad%FF.py``."""
    return quote(os.fsencode(posix_path(path)), safe="/")


def posix_path(path: str) -> str:
    """``path`` with ``/`` separators (a backslash is a separator only on Windows) and no leading ``./``."""
    if os.sep != "/":
        path = path.replace(os.sep, "/")
    return path.removeprefix("./")
