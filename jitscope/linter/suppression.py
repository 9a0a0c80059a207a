"""Suppression comments: ``# jitscope: ignore[JS101]``, ``# jitscope: ignore``, ``# noqa: JS101``.

Handled once, for static and dynamic findings alike. A comment on the first or the
last line of the flagged code suppresses it; ``# jitscope: ignore`` and a bare
``# noqa`` suppress every code on that line, the bracketed/colon forms only the codes
(or code prefixes) they list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jitscope.model.lint import Finding

_JITSCOPE_RE = re.compile(r"#\s*jitscope\s*:\s*ignore\b(?:\s*\[([^\]]*)\])?", re.IGNORECASE)
_NOQA_RE = re.compile(r"#\s*noqa\b(?:\s*:\s*([A-Za-z0-9_\-, ]+))?", re.IGNORECASE)

#: Sentinel meaning "every code".
ALL = frozenset({"*"})


def codes_on_line(line: str) -> frozenset[str]:
    """Codes suppressed by comments on ``line`` (``ALL`` for a blanket ignore)."""
    if "#" not in line:
        return frozenset()
    out: set[str] = set()
    for m in _JITSCOPE_RE.finditer(line):
        if m.group(1) is None or not m.group(1).strip():
            return ALL
        out.update(c.strip().upper() for c in m.group(1).split(",") if c.strip())
    for m in _NOQA_RE.finditer(line):
        listed = m.group(1)
        if listed is None or not listed.strip():
            return ALL
        out.update(c.strip().upper() for c in re.split(r"[,\s]+", listed) if c.strip())
    return frozenset(out)


def _matches(code: str, suppressed: frozenset[str]) -> bool:
    if suppressed is ALL or "*" in suppressed:
        return True
    return any(code.startswith(s) for s in suppressed if s.startswith("JS"))


def is_suppressed(finding: Finding, lines: Sequence[str]) -> bool:
    """True when a suppression comment on the finding's first or last line covers its code."""
    for number in {finding.line, finding.end_line}:
        if 1 <= number <= len(lines) and _matches(finding.code, codes_on_line(lines[number - 1])):
            return True
    return False


def split_suppressed(findings: Sequence[Finding], lines: Sequence[str]) -> tuple[list[Finding], int]:
    """The findings that are not suppressed, and how many were."""
    kept = [f for f in findings if not is_suppressed(f, lines)]
    return kept, len(findings) - len(kept)
