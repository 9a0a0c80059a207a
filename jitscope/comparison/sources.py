"""The user's source lines of one side, read while its files exist (a ``--base`` worktree is removed after).

Paths are shown relative to the side's root (the repository's top level, or the worktree of REV), so
the same file reads the same on both sides.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from jitscope.model.trace import TraceReport
from jitscope.userframes import read_source_lines


@dataclass(frozen=True, slots=True)
class SourceTree:
    """Where one side's files live, and the lines of those its jaxprs point at."""

    root: str = ""
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)  # relative path -> lines

    def relative(self, path: str) -> str:
        """``/tmp/wt/examples/m.py`` -> ``examples/m.py`` when under the root; otherwise as given."""
        if not self.root or not path:
            return path
        try:
            rel = os.path.relpath(path, self.root)
        except ValueError:  # another drive (Windows)
            return path
        return path if rel.startswith("..") else rel

    def line(self, file: str, number: int) -> str:
        lines = self.files.get(file, ())
        return lines[number - 1] if 0 < number <= len(lines) else ""


def user_files(report: TraceReport) -> set[str]:
    """Every file a location in the report points at (equations' lines, collectives)."""
    files: set[str] = set()
    for record in report.traces:
        stack = [record.jaxpr] if record.jaxpr is not None else []
        while stack:
            jaxpr = stack.pop()
            for eqn in jaxpr.eqns:
                if eqn.location is not None:
                    files.add(eqn.location.file)
                stack.extend(sub for _, sub in eqn.subjaxprs)
        if record.sharding is not None:
            files.update(c.file for c in record.sharding.collectives if c.file)
        if record.diagnostic is not None and record.diagnostic.location is not None:
            files.add(record.diagnostic.location.file)
    return files


def read_sources(report: TraceReport, root: str, extra: Iterable[str] = ()) -> SourceTree:
    """Read the files ``report`` points at (and ``extra``) now, keyed by their path relative to ``root``."""
    tree = SourceTree(root)
    for path in sorted(user_files(report) | set(extra)):
        tree.files[tree.relative(path)] = tuple(read_source_lines(path))
    return tree


#: A replaced run of lines larger than this (old x new) is paired by position, not by similarity.
_MAX_PAIRING_WORK = 40_000
#: How alike two lines' texts must be (difflib's ratio) to be one line edited.
_SIMILAR = 0.5


class LineCounterparts:
    """Which line of the new side's file an old line became, by a text diff of the two files (as ``git diff``
    pairs them): equal runs line for line; within a replaced run, each old line with the most alike new line
    after the previous pairing. ``None`` when it has none (deleted, or rewritten beyond recognition).

    A line's number alone says nothing once lines were inserted above it: the jaxpr alignment asks this
    instead. Files missing on either side fall back to the same number.
    """

    def __init__(self, old: SourceTree, new: SourceTree) -> None:
        self.old, self.new = old, new
        self._maps: dict[tuple[str, str], dict[int, int]] = {}

    def __call__(self, old_file: str, line: int, new_file: str) -> int | None:
        if old_file not in self.old.files or new_file not in self.new.files:
            return line
        key = (old_file, new_file)
        if key not in self._maps:
            self._maps[key] = _pair_lines(self.old.files[old_file], self.new.files[new_file])
        return self._maps[key].get(line)


def _pair_lines(old: Sequence[str], new: Sequence[str]) -> dict[int, int]:
    """Old line number -> new line number (1-based) for the lines a text diff pairs."""
    a = [" ".join(text.split()) for text in old]
    b = [" ".join(text.split()) for text in new]
    out: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.update((i1 + k + 1, j1 + k + 1) for k in range(i2 - i1))
        elif tag == "replace":
            out.update(_pair_edited(a, b, i1, i2, j1, j2))
    return out


def _pair_edited(a: Sequence[str], b: Sequence[str], i1: int, i2: int, j1: int, j2: int) -> Iterable[tuple[int, int]]:
    """Within a replaced run: each old line with its most alike new line, in order (none below ``_SIMILAR``)."""
    if (i2 - i1) * (j2 - j1) > _MAX_PAIRING_WORK:
        return [(i1 + k + 1, j1 + k + 1) for k in range(min(i2 - i1, j2 - j1))]
    pairs = []
    start = j1
    for i in range(i1, i2):
        matcher = difflib.SequenceMatcher(None, "", a[i], autojunk=False)  # a[i] as seq2: its index is kept
        best, best_ratio = None, _SIMILAR
        for j in range(start, j2):
            matcher.set_seq1(b[j])
            if matcher.real_quick_ratio() >= best_ratio and matcher.quick_ratio() >= best_ratio:
                ratio = matcher.ratio()
                if ratio > best_ratio:
                    best, best_ratio = j, ratio
        if best is not None:
            pairs.append((i + 1, best + 1))
            start = best + 1
    return pairs
