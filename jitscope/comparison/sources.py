"""The user's source lines of one side, read while its files exist (a ``--base`` worktree is removed after).

Paths are shown relative to the side's root (the repository's top level, or the worktree of REV), so
the same file reads the same on both sides.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
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
