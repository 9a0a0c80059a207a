"""``jitscope diff --memory``: what holds device memory at the peak on both sides, line by line.

Each side runs ``jitscope memory --format json`` in a process of its own (``sides.run_side``, as
``--bench`` runs ``jitscope bench``): one more compile per side, with XLA's dump, read into the exact
peak (XLA's buffer assignment and live ranges) and the bytes live there by line of the user's code.

The two sides' lines are aligned as the jaxpr comparison aligns them (``LineMap``): a line whose
equations are unchanged is the same line even if it was renamed or shifted; a changed or moved line
is paired with what it became. A line the jaxprs do not pair (a helper's line, a line the peak holds
only on one side) is paired by file and text. What is left is on one side only. Pure functions
over records, apart from ``measure``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from jitscope.comparison.sides import Side, run_side
from jitscope.comparison.sources import SourceTree
from jitscope.errors import UsageError
from jitscope.model.common import Location, from_jsonable
from jitscope.model.diff import LineChange, MemoryComparison, MemoryLine
from jitscope.model.memory import MemoryReport, MemoryRow

#: Lines shown per call (largest change first); the rest are counted in ``same`` or summed in a note.
MAX_LINES = 40

Where = tuple[str, int]  # (file relative to the side's root, line)


def measure(side: Side, flags: Sequence[str]) -> MemoryReport:
    """``jitscope memory --format json`` of ``side`` in a child process."""
    stdout = run_side(side, "memory", [*flags, "--format", "json"])
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        raise UsageError(f"{side.label}: jitscope memory wrote no JSON report") from None
    if not isinstance(data, dict) or data.get("kind") != "jitscope.memory":
        raise UsageError(f"{side.label}: jitscope memory wrote no memory report")
    try:
        return from_jsonable(MemoryReport, data)
    except ValueError as exc:  # FieldError: a field of another type (the side's jitscope is another version?)
        raise UsageError(f"{side.label}: jitscope memory wrote a report this jitscope cannot read ({exc})",
                         hint="install the same jitscope version in both environments") from None


def memory_files(report: MemoryReport) -> set[str]:
    """Every file a memory report points at (so a side's sources can be read while its files exist)."""
    files: set[str] = set()
    for row in report.rows:
        files.update(line.location.file for line in row.lines)
        files.update(n.location.file for line in row.lines for n in line.nested)
    return files


@dataclass(slots=True)
class LineMap:
    """Old line -> new line, from the jaxpr comparison of the same call."""

    pairs: dict[Where, Where] = field(default_factory=dict)
    #: Every line with equations on each side (a line found by its text must be one of them).
    old_lines: set[Where] = field(default_factory=set)
    new_lines: set[Where] = field(default_factory=set)

    @classmethod
    def build(cls, same: Iterable[tuple[Where, Where]], changes: Iterable[LineChange]) -> LineMap:
        out = cls()
        for a, b in same:
            out.pairs.setdefault(a, b)
            out.old_lines.add(a)
            out.new_lines.add(b)
        for c in changes:
            if c.old_line:
                out.old_lines.add((c.old_file, c.old_line))
            if c.new_line:
                out.new_lines.add((c.new_file, c.new_line))
            if c.old_line and c.new_line:
                out.pairs.setdefault((c.old_file, c.old_line), (c.new_file, c.new_line))
        return out


@dataclass(slots=True)
class _Side:
    bytes: int = 0
    residual: int = 0
    primitives: tuple[str, ...] = ()


def _by_line(row: MemoryRow, sources: SourceTree) -> dict[Where, _Side]:
    out: dict[Where, _Side] = {}
    for line in row.lines:
        where = (sources.relative(line.location.file), line.location.line)
        side = out.setdefault(where, _Side())
        side.bytes += line.bytes
        side.residual += line.residual_bytes
        side.primitives = side.primitives or line.primitives
    return out


def _norm(text: str) -> str:
    return " ".join(text.split())


def align(old: Sequence[Where], new: Sequence[Where], line_map: LineMap, old_sources: SourceTree,
          new_sources: SourceTree) -> list[tuple[Where | None, Where | None]]:
    """Pair old lines with new ones: the jaxpr's pairing first, then the same file and text (nearest
    number first). A line the peak holds on one side only is paired with its counterpart on the other side
    where it has one (it holds nothing at the peak there); else it stands alone."""
    left, holding = set(new), set(new)
    pairs: list[tuple[Where | None, Where | None]] = []
    unpaired: list[Where] = []
    for where in old:
        twin = line_map.pairs.get(where)
        if twin is not None and twin in left:
            left.discard(twin)
            pairs.append((where, twin))
        else:
            unpaired.append(where)
    for where in unpaired:
        twin = _same_text(where, left, old_sources, new_sources)
        if twin is not None:
            left.discard(twin)
            pairs.append((where, twin))
        else:
            twin = line_map.pairs.get(where) or _same_text(where, line_map.new_lines, old_sources, new_sources)
            pairs.append((where, twin if twin not in holding else None))
    inverse = {b: a for a, b in line_map.pairs.items()}
    paired_old = {a for a, _ in pairs}
    for where in new:
        if where in left:
            twin = inverse.get(where) or _same_text(where, line_map.old_lines, new_sources, old_sources)
            pairs.append((twin if twin not in paired_old else None, where))
    return pairs


def _same_text(where: Where, among: set[Where], sources: SourceTree, other: SourceTree) -> Where | None:
    """The line of ``among`` (on the other side) in the same file with the same text, nearest in number."""
    text = _norm(sources.line(*where))
    if not text:
        return None
    candidates = [w for w in among if w[0] == where[0] and _norm(other.line(*w)) == text]
    return min(candidates, key=lambda w: abs(w[1] - where[1])) if candidates else None


def _where_of(location: Location | None, sources: SourceTree) -> str:
    return f"{sources.relative(location.file)}:{location.line}" if location is not None else ""


def _residual(row: MemoryRow) -> int | None:
    """Residual bytes live at the peak; None where this JAX does not mark the backward pass."""
    from jitscope.buffers.advice import UNMARKED

    if UNMARKED in row.warnings:
        return None
    return sum(b.bytes for b in row.peak.buffers if b.residual)


def compare_rows(old: MemoryRow, new: MemoryRow, line_map: LineMap, old_sources: SourceTree,
                 new_sources: SourceTree, limit: int = MAX_LINES) -> MemoryComparison:
    """One call's two memory rows compared: the peaks, and bytes at the peak by aligned line."""
    a, b = _by_line(old, old_sources), _by_line(new, new_sources)
    rows: list[MemoryLine] = []
    same = 0
    for before, after in align(list(a), list(b), line_map, old_sources, new_sources):
        x = a.get(before, _Side()) if before is not None else _Side()
        y = b.get(after, _Side()) if after is not None else _Side()
        if x.bytes == y.bytes and x.residual == y.residual:
            same += 1
            continue
        text = new_sources.line(*after) if after is not None else old_sources.line(*before) if before else ""
        rows.append(MemoryLine(
            before[0] if before else "", before[1] if before else 0, after[0] if after else "",
            after[1] if after else 0, text.strip(), x.bytes, y.bytes, x.residual, y.residual,
            (y.primitives if y.bytes >= x.bytes else x.primitives) or x.primitives or y.primitives))
    rows.sort(key=lambda r: (-abs(r.change), r.new_where or r.old_where))
    notes: list[str] = []
    if len(rows) > limit:
        rest = rows[limit:]
        notes.append(f"{len(rest)} more lines changed by {sum(r.change for r in rest):+,} bytes in all")
        rows = rows[:limit]
    old_residual, new_residual = _residual(old), _residual(new)
    for label, row, value in (("old", old, old_residual), ("new", new, new_residual)):
        if value is None:
            notes.append(f"{label} side: this JAX's HLO does not mark the backward pass (jax 0.4.x): residuals "
                         "are not shown")
    if old.devices != new.devices:
        notes.append(f"the old side runs on {old.devices} devices, the new on {new.devices}: bytes are per device")
    return MemoryComparison(
        old_peak=old.peak.bytes, new_peak=new.peak.bytes, old_reserved=old.totals.reserved,
        new_reserved=new.totals.reserved, old_arguments=old.peak.arguments, new_arguments=new.peak.arguments,
        lines=tuple(rows), same=same, old_residual=old_residual, new_residual=new_residual,
        old_peak_at=_where_of(old.peak.location, old_sources), new_peak_at=_where_of(new.peak.location, new_sources),
        notes=tuple(notes))


def pair_rows(old: MemoryReport, new: MemoryReport) -> list[tuple[MemoryRow | None, MemoryRow | None]]:
    """Rows call for call, in the order both sides traced them (the calls ``--memory`` compiled)."""
    n = max(len(old.rows), len(new.rows))
    return [(old.rows[i] if i < len(old.rows) else None, new.rows[i] if i < len(new.rows) else None)
            for i in range(n)]


def failure_note(report: MemoryReport, label: str) -> str:
    """A side's ``jitscope memory`` failures in one line ("" when none)."""
    if not report.failures:
        return ""
    first = report.failures[0]
    more = f" (and {len(report.failures) - 1} more)" if len(report.failures) > 1 else ""
    return f"{label} side: jitscope memory failed: {first.error}{more}"
