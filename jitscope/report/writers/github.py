"""Lint findings as GitHub Actions workflow commands (annotations on the pull request's diff).

``render_github(report) -> str``; imports neither jax nor rich.
"""

from __future__ import annotations

from jitscope.model.lint import LintReport
from jitscope.report.writers.sarif import posix_path

_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def render_github(report: LintReport) -> str:
    """One GitHub Actions workflow command per finding (``::error file=...,line=...::message``)."""
    lines = []
    for f in report.findings:
        command = _GITHUB_COMMAND.get(f.severity, "warning")
        props = {
            "file": posix_path(f.file),
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
