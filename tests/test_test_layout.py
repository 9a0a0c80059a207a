"""The test folders have no ``__init__.py``: pytest imports each test file by its base name, so two
files of the same name in different folders collide ("import file mismatch") and one is never run."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_file_name_is_unique() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if "targets" not in p.relative_to(TESTS).parts)
    assert [name for name, count in names.items() if count > 1] == []
