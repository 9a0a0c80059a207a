"""Small helpers for the lint tests."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from jitscope.linter import lint_paths, lint_source
from jitscope.model.lint import Finding

#: (file relative to the corpus, line, rule code)
Marked = set[tuple[str, int, str]]
_EXPECT = re.compile(r"#\s*expect:\s*((?:JS\d{3}[,\s]*)+)")


def lint(source: str, select: list[str] | None = None) -> list[Finding]:
    return lint_source(textwrap.dedent(source), "example.py", select=select)


def codes(source: str) -> list[str]:
    return [f.code for f in lint(source)]


def corpus_scores(corpus: Path) -> tuple[Marked, Marked]:
    """The hazards marked ``# expect: JSxxx`` in a corpus of files, and what ``jitscope lint`` finds there."""
    corpus = corpus.resolve()
    expected: Marked = set()
    for path in sorted(corpus.rglob("*.py")):
        rel = path.relative_to(corpus).as_posix()
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = _EXPECT.search(line)
            if match:
                expected.update((rel, line_no, code) for code in re.findall(r"JS\d{3}", match.group(1)))
    report = lint_paths([corpus], root=corpus, jobs=1)
    found = {(_relative(f.file, corpus), f.line, f.code) for f in report.findings}
    return expected, found


def _relative(file: str, corpus: Path) -> str:
    path = Path(file)
    return (path if path.is_absolute() else Path.cwd() / path).resolve().relative_to(corpus).as_posix()


def assert_recall(expected: Marked, found: Marked, at_least: float) -> None:
    missed = sorted(expected - found)
    recall = 1 - len(missed) / len(expected)
    assert recall >= at_least, f"recall {recall:.2f}; missed: {missed}"


def assert_precision(expected: Marked, found: Marked, at_least: float) -> None:
    false_alarms = sorted(found - expected)
    precision = len(found & expected) / max(len(found), 1)
    assert precision >= at_least, f"precision {precision:.2f}; false alarms: {false_alarms}"
