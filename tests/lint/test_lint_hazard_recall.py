"""Recall and precision on a small corpus of realistic hazards (tests/targets/lint_hazards).

Every hazard line carries ``# expect: JSxxx``; every other finding is a false alarm (the clean
files and the fixed-shape loops must stay quiet). The goals are the issue's: recall >= 0.95 and
precision >= 0.97.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jitscope.lint import lint_paths

CORPUS = Path(__file__).resolve().parents[1] / "targets" / "lint_hazards"
_EXPECT = re.compile(r"#\s*expect:\s*((?:JS\d{3}[,\s]*)+)")


def _expected() -> set[tuple[str, int, str]]:
    out: set[tuple[str, int, str]] = set()
    for path in sorted(CORPUS.rglob("*.py")):
        rel = path.relative_to(CORPUS).as_posix()
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = _EXPECT.search(line)
            if match:
                out.update((rel, line_no, code) for code in re.findall(r"JS\d{3}", match.group(1)))
    return out


def _rel(file: str) -> str:
    path = Path(file)
    return (path if path.is_absolute() else Path.cwd() / path).resolve().relative_to(CORPUS).as_posix()


@pytest.fixture(scope="module")
def scores() -> tuple[set[tuple[str, int, str]], set[tuple[str, int, str]]]:
    report = lint_paths([CORPUS], root=CORPUS, jobs=1)
    found = {(_rel(f.file), f.line, f.code) for f in report.findings}
    return _expected(), found


def test_corpus_is_meaningful(scores: tuple[set[tuple[str, int, str]], set[tuple[str, int, str]]]) -> None:
    expected, _ = scores
    assert len(expected) >= 25
    assert {code for _, _, code in expected} >= {"JS204", "JS301", "JS302", "JS303", "JS304"}


def test_recall(scores: tuple[set[tuple[str, int, str]], set[tuple[str, int, str]]]) -> None:
    expected, found = scores
    missed = sorted(expected - found)
    recall = 1 - len(missed) / len(expected)
    assert recall >= 0.95, f"recall {recall:.2f}; missed: {missed}"


def test_precision(scores: tuple[set[tuple[str, int, str]], set[tuple[str, int, str]]]) -> None:
    expected, found = scores
    false_alarms = sorted(found - expected)
    precision = len(found & expected) / max(len(found), 1)
    assert precision >= 0.97, f"precision {precision:.2f}; false alarms: {false_alarms}"
