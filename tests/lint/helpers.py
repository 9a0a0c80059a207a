"""Small helpers for the lint tests."""

from __future__ import annotations

import textwrap

from jitscope.lint import lint_source
from jitscope.model.lint import Finding


def lint(source: str, select: list[str] | None = None) -> list[Finding]:
    return lint_source(textwrap.dedent(source), "example.py", select=select)


def codes(source: str) -> list[str]:
    return [f.code for f in lint(source)]
