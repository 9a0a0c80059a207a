"""Recall and precision on a small corpus of realistic hazards (tests/targets/lint_hazards).

Every hazard line carries ``# expect: JSxxx``; every other finding is a false alarm (the clean
files and the fixed-shape loops must stay quiet). The goals are the issue's: recall >= 0.95 and
precision >= 0.97.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lint.helpers import Marked, assert_precision, assert_recall, corpus_scores

CORPUS = Path(__file__).resolve().parents[1] / "targets" / "lint_hazards"


@pytest.fixture(scope="module")
def scores() -> tuple[Marked, Marked]:
    return corpus_scores(CORPUS)


def test_corpus_is_meaningful(scores: tuple[Marked, Marked]) -> None:
    expected, _ = scores
    assert len(expected) >= 25
    assert {code for _, _, code in expected} >= {"JS204", "JS301", "JS302", "JS303", "JS304"}


def test_recall(scores: tuple[Marked, Marked]) -> None:
    assert_recall(*scores, at_least=0.95)


def test_precision(scores: tuple[Marked, Marked]) -> None:
    assert_precision(*scores, at_least=0.97)
