"""Lint records: findings, rule metadata and the report a lint run produces.

These are plain frozen records (no AST nodes, no JAX objects), so the static linter,
the tracer-based dynamic linter and every renderer (text, json, sarif, github) share
them, and a saved JSON report can be read back with ``from_jsonable(LintReport, ...)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from jitscope.model.common import OMITTED_WHEN_DEFAULT, SCHEMA_VERSION

Severity = Literal["info", "warning", "error"]
FindingSource = Literal["static", "dynamic"]

#: Severities from least to most severe; ``--fail-on`` compares by this order.
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")


def severity_rank(severity: str) -> int:
    """0 for info, 1 for warning, 2 for error (unknown strings count as error)."""
    try:
        return SEVERITIES.index(severity)
    except ValueError:
        return len(SEVERITIES) - 1


class RuleIdentity(Protocol):
    """What a finding copies from the rule that made it (``linter.rule.Rule`` has these as class variables)."""

    @property
    def code(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def severity(self) -> Severity: ...


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text from (``line``, ``column``) up to (``end_line``, ``end_column``) with ``text``.

    The positions follow :class:`Finding`: 1-based lines, 1-based character (not byte) columns, the
    end exclusive; an insertion has its end equal to its start. ``text`` uses ``\\n`` for new lines
    (written in the file's own newline style).
    """

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A safe rewrite that makes a finding go away (``jitscope lint --fix``): its edits apply together."""

    #: what the fix does, for a person (``Replace with `x = x.at[i].set(v)```)
    title: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem at one place in the user's code.

    ``line``/``column`` are 1-based; ``end_column`` is 1-based and exclusive (the
    column just after the flagged code), the convention SARIF uses.
    """

    code: str
    name: str
    message: str
    severity: Severity
    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    function: str = "<module>"
    suggestion: str = ""
    source: FindingSource = "static"
    #: the safe rewrite that removes this finding, when there is one (see ``jitscope.linter.fixes``);
    #: left out of JSON while None
    fix: Fix | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.file, self.line, self.column, self.code)


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """What a renderer needs to know about a rule (SARIF rule table, ``jitscope rule``)."""

    code: str
    name: str
    severity: Severity
    summary: str
    docs: str
    dynamic_only: bool = False


@dataclass(frozen=True, slots=True)
class RuleStat:
    """How many findings one rule produced (``--statistics``)."""

    code: str
    name: str
    severity: Severity
    count: int


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A path found while collecting files but never read: a FIFO, a device, a socket, a broken link."""

    file: str
    reason: str


@dataclass(frozen=True, slots=True)
class LintReport:
    """Everything a lint run found, after suppression and selection."""

    findings: tuple[Finding, ...]
    files_checked: int
    lines_checked: int
    statistics: tuple[RuleStat, ...]
    rules: tuple[RuleInfo, ...]
    fail_on: Severity = "warning"
    suppressed: int = 0
    #: paths that were not linted because they are not regular files (each with why)
    skipped: tuple[SkippedFile, ...] = ()
    schema_version: str = SCHEMA_VERSION
    kind: str = "jitscope.lint"

    def counts(self) -> dict[str, int]:
        """Number of findings per severity, every severity present."""
        out: dict[str, int] = {s: 0 for s in SEVERITIES}
        for f in self.findings:
            out[f.severity] = out.get(f.severity, 0) + 1
        return out

    @property
    def failed(self) -> bool:
        """True when any finding is at or above the ``fail_on`` severity."""
        threshold = severity_rank(self.fail_on)
        return any(severity_rank(f.severity) >= threshold for f in self.findings)
