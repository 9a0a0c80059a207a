"""Lint on the program's own files, kept to the hazards the run really hit (``jitscope lint``'s engine).

A lint finding is hit when it sits in a function the run compiled, or at a line the run called jit from,
copied a value to the host at, or ran a side effect at. One that explains a problem doctor already
found (JS302 at the loop whose static value recompiled ``step``) becomes that finding's evidence: lint
would have caught it before the run. The others are findings of their own, after the timed ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from jitscope.model.common import Location
from jitscope.model.doctor import LINT_HAZARD, NOT_ESTIMATED, TRACE_EFFECT, Finding
from jitscope.model.lint import Finding as LintFinding
from jitscope.model.run import USER, RunRecord

#: Lint severities doctor passes on (an "info" finding is advice, not a hazard).
_SEVERE = {"warning", "error"}


def lint_hits(record: RunRecord, findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` with the lint findings the run hit folded in: as evidence of the one they explain, or
    as findings of their own after them."""
    files = _user_files(record)
    if not files:
        return list(findings)
    from jitscope.config import load_config
    from jitscope.linter.engine import lint_paths

    root = Path.cwd()
    try:
        config = load_config(root).lint
        report = lint_paths(sorted(files), config, root=root, jobs=1)
    except Exception:  # noqa: BLE001 - lint is a bonus here; a config it cannot read leaves the run's findings
        return list(findings)
    traced = {(_key(e.defined_at.file), e.function) for e in record.events
              if e.kind == USER and e.defined_at is not None}
    lines = {(_key(w.file), w.line) for w in _run_lines(record)}
    out = list(findings)
    extra: list[Finding] = []
    for hazard in report.findings:
        if hazard.severity not in _SEVERE:
            continue
        where = (_key(hazard.file), hazard.line)
        if where not in lines and (_key(hazard.file), hazard.function) not in traced:
            continue  # code the run never compiled or reached: lint's business, not doctor's
        explained = _explained(out, hazard, record)
        note = f"lint {hazard.code} ({hazard.name}) flags it before any run: {hazard.message}"
        if explained is not None:
            out[explained] = replace(out[explained], evidence=(*out[explained].evidence, note))
            continue
        extra.append(Finding(
            kind=LINT_HAZARD, title=f"{hazard.code} {hazard.name}: {hazard.message}",
            location=Location(hazard.file, hazard.line, hazard.function, hazard.column), cost_s=0.0,
            change=hazard.suggestion or f"see jitscope lint's rule {hazard.code}", gain_s=0.0, gain=NOT_ESTIMATED,
            gain_note="a hazard in code this run compiled or reached; not timed", function=hazard.function))
    return out + extra


def _user_files(record: RunRecord) -> set[str]:
    return {w.file for w in _run_lines(record) if w.file.endswith(".py") and Path(w.file).is_file()} | {
        e.defined_at.file for e in record.events
        if e.kind == USER and e.defined_at is not None and Path(e.defined_at.file).is_file()}


def _run_lines(record: RunRecord) -> list[Location]:
    """The lines of the user's code the run saw doing something: jit calls, copies to the host, effects."""
    lines = [e.call_site for e in record.events if e.call_site is not None]
    lines += [s.location for s in record.syncs]
    lines += [effect.location for e in record.events for effect in e.effects]
    return lines


def _key(file: str) -> str:
    return str(Path(file).resolve())


def _explained(findings: Sequence[Finding], hazard: LintFinding, record: RunRecord) -> int | None:
    """The finding ``hazard`` explains: one at its line (a side effect), or the recompiles of a function
    whose recompiling calls come from its line (JS302 at the loop)."""
    here = (_key(hazard.file), hazard.line)
    for i, finding in enumerate(findings):
        if finding.location is not None and (_key(finding.location.file), finding.location.line) == here:
            return i
    for i, finding in enumerate(findings):
        if finding.kind == TRACE_EFFECT or not finding.function:
            continue
        if any(e.function == finding.function and e.number > 1 and e.call_site is not None
               and (_key(e.call_site.file), e.call_site.line) == here for e in record.events):
            return i
    return None
