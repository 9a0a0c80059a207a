"""Output shown on a docs page, checked against what jitscope prints.

Most output on the docs site is produced while it builds (``{command-output}``) or is a ```console
excerpt that ``tests/test_readme.py`` runs. A few blocks show output no build can produce quickly (two
git revisions, a faked cluster job): those are ```text blocks that the test running the same command
checks with :func:`assert_shown`, so the page cannot drift from the tool either.
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
_TEXT_BLOCK = re.compile(r"^( *)```text\n(.*?)^\1```", re.DOTALL | re.MULTILINE)
#: What changes from run to run or from one JAX to another: numbers with their units (times, sizes, ratios,
#: line numbers) and hex fingerprints; not the digits of a name (``p1``, ``f32``).
_VARYING = re.compile(r"\b[0-9a-f]{8,16}\b|(?<![\w.])\d+(?:\.\d+)?(?: ?(?:[KMG]iB|B|[nµm]?s|%|x)(?!\w))?")


def _normalise(text: str) -> str:
    return " ".join(text.split())


def assert_excerpt(output: str, excerpt: tuple[str, ...], where: str) -> None:
    """Each line of ``excerpt`` appears in ``output``, in order, whitespace-insensitive; ``...`` stands for
    anything (a line of it alone skips, one at a line's end matches its beginning only, one inside a line
    skips that part of it)."""
    flat = _normalise(output)
    position = 0
    for raw in excerpt:
        for piece in _normalise(raw).split("..."):
            piece = piece.strip()
            if not piece:
                continue
            found = flat.find(piece, position)
            assert found >= 0, f"docs line {where}: output does not contain, in order:\n  {raw}\n--- output ---\n{output}"
            position = found + len(piece)


def text_block(page: str, first_line: str) -> tuple[str, tuple[str, ...]]:
    """The ```text block of ``docs/PAGE`` whose first line starts with ``first_line``: (where, its lines)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    for match in _TEXT_BLOCK.finditer(text):
        lines = match.group(2).splitlines()
        if lines and lines[0].strip().startswith(first_line):
            return f"docs/{page}:{text.count(chr(10), 0, match.start()) + 1}", tuple(lines)
    raise AssertionError(f"docs/{page} has no ```text block starting {first_line!r}")


def assert_shown(output: str, page: str, first_line: str) -> None:
    """The page's block starting ``first_line`` has the shape of ``output``: its lines, in order, with the
    numbers and fingerprints that vary from run to run left out of the comparison (``$ `` command lines are
    the command, not output)."""
    assert_same_shape(output, *reversed(text_block(page, first_line)))


def assert_same_shape(output: str, shown: tuple[str, ...], where: str) -> None:
    """``shown`` is an excerpt of ``output`` but for numbers and fingerprints; ``$ `` lines are commands."""
    excerpt = tuple(_VARYING.sub("0", line) for line in shown if not line.lstrip().startswith("$ "))
    assert_excerpt(_VARYING.sub("0", output), excerpt, where)
