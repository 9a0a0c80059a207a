"""Two ``jitscope trace`` reports in, one ``DiffReport`` out: pure functions over records.

Calls are paired by function and position in the call sequence (or, when each side has one call,
with each other: ``old.py:f`` against ``new.py:g``). Each pair is compared by ``comparison/jaxpr.py``
(lines of the user's code, primitive counts), ``comparison/hlo.py`` (optimised HLO and collectives) and
the figures below (cost, memory, compile times).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from jitscope.comparison import hlo as hlo_diff
from jitscope.comparison import keys as key_diff
from jitscope.comparison import memory as memory_diff
from jitscope.comparison.jaxpr import (
    FlatEqn,
    diff_lines,
    flatten,
    group_lines,
    lines_by_primitive,
    primitive_deltas,
)
from jitscope.comparison.compile_time import compare_compile_times
from jitscope.comparison.sources import LineCounterparts, SourceTree
from jitscope.model.diff import (
    BenchComparison,
    CallDiff,
    DiffReport,
    MemoryComparison,
    Metric,
    SideInfo,
    schema_for,
)
from jitscope.model.memory import MemoryReport, MemoryRow
from jitscope.model.trace import TraceRecord, TraceReport

#: The ``peak`` figure's label: XLA's memory_analysis() bound, or (``--memory``) the exact peak.
PEAK_BOUND = "peak memory (args + outputs + temps)"
PEAK_EXACT = "peak memory (buffer assignment)"


def diff_reports(old: TraceReport, new: TraceReport, *, old_label: str, new_label: str,
                 old_sources: SourceTree | None = None, new_sources: SourceTree | None = None,
                 benches: Sequence[BenchComparison | None] = (),
                 memories: tuple[MemoryReport, MemoryReport] | None = None) -> DiffReport:
    """Compare every call of ``new`` with the same call of ``old``; ``memories`` (``--memory``): each side's
    ``jitscope memory`` report of the same calls."""
    old_sources = old_sources or SourceTree()
    new_sources = new_sources or SourceTree()
    pairs, notes = pair_calls(old.traces, new.traces)
    rows = (_rows_for(old.traces, memories[0]), _rows_for(new.traces, memories[1])) if memories else None
    calls = []
    for i, (a, b) in enumerate(pairs):
        bench = benches[i] if i < len(benches) else None
        memory = (rows[0].get(id(a)), rows[1].get(id(b))) if rows is not None else None
        calls.append(diff_call(a, b, old_label=old_label, new_label=new_label, old_env=old.environment,
                               new_env=new.environment, old_sources=old_sources, new_sources=new_sources, bench=bench,
                               memory=memory, old_calls=old.traces, new_calls=new.traces))
    for key in ("jax", "jaxlib", "backend", "device_count", "x64"):
        if key in old.environment and key in new.environment and old.environment[key] != new.environment[key]:
            notes.append(f"{key}: {old.environment[key]} on the old side, {new.environment[key]} on the new")
    if memories is not None:
        notes += [n for n in (memory_diff.failure_note(memories[0], "old"), memory_diff.failure_note(memories[1], "new"))
                  if n]
    compiles = key_diff.compile_counts(pairs, [c.keys for c in calls])
    report = DiffReport(old_label=old_label, new_label=new_label, calls=tuple(calls), notes=tuple(notes),
                        compiles=compiles)
    return dataclasses.replace(report, schema_version=schema_for(report))


def _rows_for(records: Sequence[TraceRecord], report: MemoryReport) -> dict[int, MemoryRow]:
    """Each trace record's memory row: the same call, in order (a call memory could not compile has none)."""
    rows = list(report.rows)
    out: dict[int, MemoryRow] = {}
    for record in records:
        twin = next((r for r in rows if r.call == record.call and
                     r.target.rsplit(":", 1)[-1] == _function(record)), None)
        if twin is None:
            twin = next((r for r in rows if r.call == record.call), None)
        if twin is not None:
            rows.remove(twin)
            out[id(record)] = twin
    return out


def _function(record: TraceRecord) -> str:
    return record.target.rsplit(":", 1)[-1]


def pair_calls(old: Sequence[TraceRecord], new: Sequence[TraceRecord]
               ) -> tuple[list[tuple[TraceRecord, TraceRecord]], list[str]]:
    """Calls of the same function at the same position of its call sequence; a lone call with a lone call."""
    if len(old) == 1 and len(new) == 1:
        return [(old[0], new[0])], []
    by_key = {(_function(r), r.call_index): r for r in old}
    pairs: list[tuple[TraceRecord, TraceRecord]] = []
    notes: list[str] = []
    for record in new:
        twin = by_key.pop((_function(record), record.call_index), None)
        if twin is None:
            notes.append(f"{record.target} call {record.call_index} ({record.call}) is only on the new side")
        else:
            pairs.append((twin, record))
    notes += [f"{r.target} call {r.call_index} ({r.call}) is only on the old side" for r in by_key.values()]
    return pairs, notes


def _side(record: TraceRecord, label: str, env: dict[str, str | int | bool], sources: SourceTree) -> SideInfo:
    diag = record.diagnostic
    where = ""
    if diag is not None and diag.location is not None:
        where = f"{sources.relative(diag.location.file)}:{diag.location.line}"
    return SideInfo(label=label, target=record.target, call=record.call, environment=dict(env),
                    failure=diag.message if diag is not None else "", failure_where=where)


def diff_call(old: TraceRecord, new: TraceRecord, *, old_label: str = "old", new_label: str = "new",
              old_env: dict[str, str | int | bool] | None = None, new_env: dict[str, str | int | bool] | None = None,
              old_sources: SourceTree | None = None, new_sources: SourceTree | None = None,
              bench: BenchComparison | None = None,
              memory: tuple[MemoryRow | None, MemoryRow | None] | None = None,
              old_calls: Sequence[TraceRecord] = (), new_calls: Sequence[TraceRecord] = ()) -> CallDiff:
    """One call compared: lines, primitives, HLO, collectives, figures, compile-cache keys and (``memory``:
    each side's ``jitscope memory`` row of it) memory at the peak by line."""
    old_sources = old_sources or SourceTree()
    new_sources = new_sources or SourceTree()
    info = (_side(old, old_label, old_env or {}, old_sources), _side(new, new_label, new_env or {}, new_sources))
    base = CallDiff(target=_function(new), call=new.call, old=info[0], new=info[1], bench=bench)
    if old.jaxpr is None or new.jaxpr is None:
        return base
    old_eqns = list(flatten(old.jaxpr, old_sources.relative))
    new_eqns = list(flatten(new.jaxpr, new_sources.relative))
    lines = diff_lines(group_lines(old_eqns), group_lines(new_eqns), old_sources.line, new_sources.line,
                       LineCounterparts(old_sources, new_sources))
    notes: list[str] = []
    hlo_changes: tuple[hlo_diff.HloChange, ...] = ()
    matched, fusion_note = 0, ""
    old_ops = new_ops = None
    old_hlo, new_hlo = _hlo(old), _hlo(new)
    if old_hlo and new_hlo:
        old_ops, new_ops = hlo_diff.module_ops(old_hlo), hlo_diff.module_ops(new_hlo)
        old_changed = {(c.old_file, c.old_line) for c in lines.changes if c.kind in ("removed", "changed")}
        new_changed = {(c.new_file, c.new_line) for c in lines.changes if c.kind in ("added", "changed")}
        found = hlo_diff.diff_modules(old_ops, new_ops, _locator(old_eqns, old_sources), _locator(new_eqns, new_sources),
                                      old_changed, new_changed)
        hlo_changes, matched, fusion_note = found.changes, found.matched, found.fusion_note
    elif old_hlo or new_hlo:
        notes.append("only one side was compiled: the optimised HLO is not compared")
    memory_cmp = None
    if memory is not None:
        if memory[0] is not None and memory[1] is not None:
            line_map = memory_diff.LineMap.build(lines.same, lines.changes)
            memory_cmp = memory_diff.compare_rows(memory[0], memory[1], line_map, old_sources, new_sources)
        else:
            missing = " and ".join(n for n, r in (("old", memory[0]), ("new", memory[1])) if r is None)
            notes.append(f"--memory: no memory report of this call on the {missing} side")
    collectives = hlo_diff.diff_collectives(
        old.sharding.collectives if old.sharding else (), new.sharding.collectives if new.sharding else (),
        old_sources.relative, new_sources.relative)
    return CallDiff(
        target=base.target, call=base.call, old=base.old, new=base.new, changes=lines.changes,
        edited_same=lines.edited_same, unchanged=lines.unchanged,
        primitives=primitive_deltas(old.summary, new.summary), hlo=hlo_changes, hlo_matched=matched,
        fusion_note=fusion_note, collectives=collectives, metrics=metrics(old, new, old_ops, new_ops, memory_cmp),
        bench=bench, memory=memory_cmp, keys=key_diff.compare_keys(old, new, old_calls, new_calls),
        compile_time=compare_compile_times(old.compile_time, new.compile_time, old_sources, new_sources),
        notes=tuple(notes + [f"{label} side: {w}" for label, r in (("old", old), ("new", new)) for w in r.warnings]),
    )


def _hlo(record: TraceRecord) -> str | None:
    return record.stages.hlo if record.stages is not None else None


def _locator(eqns: list[FlatEqn], sources: SourceTree) -> hlo_diff.Locate:
    return hlo_diff.locator(lines_by_primitive(eqns), sources.relative)


def metrics(old: TraceRecord, new: TraceRecord, old_ops: hlo_diff.ModuleOps | None = None,
            new_ops: hlo_diff.ModuleOps | None = None, exact: MemoryComparison | None = None) -> tuple[Metric, ...]:
    """Every figure both sides may have, in the order a reviewer reads them. ``peak`` is the exact peak of
    XLA's buffer assignment where ``--memory`` measured it, else memory_analysis()'s bound."""

    def cost(r: TraceRecord, name: str) -> float | None:
        c = r.stages.cost if r.stages is not None else None
        return getattr(c, name) if c is not None else None

    def memory(r: TraceRecord, name: str) -> float | None:
        m = r.stages.memory if r.stages is not None else None
        value = getattr(m, name) if m is not None else None
        return float(value) if value is not None else None

    def stage(r: TraceRecord, name: str) -> float | None:
        return getattr(r.stages, name) if r.stages is not None else None

    def comm(r: TraceRecord) -> float | None:
        return float(r.sharding.send_bytes) if r.sharding is not None else None

    def collectives(r: TraceRecord) -> float | None:
        return float(len(r.sharding.collectives)) if r.sharding is not None else None

    def eqns(r: TraceRecord) -> float | None:
        return float(r.summary.n_eqns_total) if r.summary is not None else None

    out = [
        Metric("flops", "FLOPs", cost(old, "flops"), cost(new, "flops"), "flops"),
        Metric("transcendentals", "transcendentals", cost(old, "transcendentals"), cost(new, "transcendentals")),
        Metric("bytes", "bytes accessed", cost(old, "bytes_accessed"), cost(new, "bytes_accessed"), "bytes"),
        Metric("peak", PEAK_EXACT, float(exact.old_peak), float(exact.new_peak), "bytes") if exact is not None
        else Metric("peak", PEAK_BOUND, memory(old, "peak_bytes"), memory(new, "peak_bytes"), "bytes"),
        Metric("temp", "temporaries", memory(old, "temp_bytes"), memory(new, "temp_bytes"), "bytes"),
        Metric("arguments", "arguments", memory(old, "argument_bytes"), memory(new, "argument_bytes"), "bytes"),
        Metric("outputs", "outputs", memory(old, "output_bytes"), memory(new, "output_bytes"), "bytes"),
        Metric("equations", "jaxpr equations", eqns(old), eqns(new)),
        Metric("instructions", "HLO instructions", float(len(old_ops.ops)) if old_ops else None,
               float(len(new_ops.ops)) if new_ops else None),
        Metric("fusions", "fusions", float(old_ops.fusions) if old_ops else None,
               float(new_ops.fusions) if new_ops else None),
        Metric("collectives", "collectives", collectives(old), collectives(new)),
        Metric("comm-bytes", "sent per device", comm(old), comm(new), "bytes"),
        Metric("trace-time", "trace time", old.trace_seconds or None, new.trace_seconds or None, "seconds", True),
        Metric("lower-time", "lower time", stage(old, "lower_seconds"), stage(new, "lower_seconds"), "seconds", True),
        Metric("compile-time", "compile time", stage(old, "compile_seconds"), stage(new, "compile_seconds"), "seconds",
               True),
    ]
    return tuple(m for m in out if m.old is not None or m.new is not None)
