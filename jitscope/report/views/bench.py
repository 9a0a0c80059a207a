"""``jitscope bench`` records as a view model: cold-call phases, cached-call distributions, derived
figures, ``--eager`` and ``--cold-process`` tables, failed calls, log-log scaling charts with their
fitted slopes, and the baseline comparison; the legend and environment close it.

Every back end renders this one document: the terminal draws the scaling chart in characters and
abbreviates long call names when a table would not fit (``Fit``); HTML draws every chart as SVG.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from jitscope.model.bench import (
    MEMORY_METRIC,
    BenchFailure,
    BenchReport,
    BenchRow,
    ComparisonRecord,
    ScalingRecord,
)
from jitscope.report.views.document import (
    Block,
    Cell,
    Chart,
    Column,
    Document,
    Fit,
    Note,
    Paragraph,
    Section,
    Series,
    Table,
    pieces,
)
from jitscope.units import NA, fmt_bytes, fmt_change, fmt_count, fmt_duration, fmt_rate, fmt_slope

PHASES = ("trace", "lower", "compile", "1st run", "other")
#: Calls longer than this are shown as ``fn #N`` in the tables, with the full call listed once above them.
LONG_CALL = 40

LEGEND = (
    "trace/lower/compile: JAX's monitoring events; 1st run: end of compile until outputs ready; other: "
    "the rest of the first call (no event covers it). median/IQR/min/mean: per call over rounds; dispatch: "
    "until the call returned, not waiting for results (small CPU programs run inside the call, so it is close "
    "to the blocked time); outliers: beyond 1.5 IQR; beyond 1 stddev. Before the timed rounds, warm-up runs "
    "until two consecutive windows of rounds agree within 5% (a steady state; at most --max-warmup). "
    "1st call = N calls: cold minus cached, in cached calls. Cold calls run in this (warm) process after one "
    "throwaway compile; --cold-process measures a new process, imports included."
)


def _function(target: str) -> str:
    """``fn`` of a ``path.py:fn`` or ``pkg.mod:fn`` target."""
    return target.rsplit(":", 1)[-1]


def _labelled(name: str, label: str) -> str:
    return f"{name} [{label}]" if label else name


def display_names(rows: Sequence[BenchRow], *, abbreviate: bool = False) -> tuple[list[str], list[str]]:
    """Names for the table rows, and the lines that spell out abbreviated calls (``fn #N = fn(...)``).

    Calls are abbreviated when one is longer than ``LONG_CALL`` or when ``abbreviate`` is set.
    """
    full = [_labelled(f"{_function(r.target)}({r.call})", r.label) for r in rows]
    if not abbreviate and all(len(n) <= LONG_CALL for n in full):
        return full, []
    short = [f"{_function(r.target)} #{i + 1}" for i, r in enumerate(rows)]
    return short, [f"{s} = {f}" for s, f in zip(short, full, strict=True)]


def _columns(*names: str) -> tuple[Column, ...]:
    return (Column("call"), *(Column(n, "right") for n in names))


def _cache_cell(row: BenchRow) -> Cell:
    hits = [run.cache_hit for run in row.cold.runs if run.cache_hit is not None]
    if not hits:
        return NA
    if all(hits):
        return pieces("hit", "jitscope.warn")
    return "miss" if not any(hits) else pieces(f"{sum(hits)}/{len(hits)} hits", "jitscope.warn")


def cold_section(rows: Sequence[BenchRow], names: Sequence[str]) -> Section:
    show_cache = any(run.cache_hit is not None for r in rows for run in r.cold.runs)
    table_rows: list[tuple[Cell, ...]] = []
    series: list[list[tuple[float, float]]] = [[] for _ in PHASES]
    for i, (row, name) in enumerate(zip(rows, names, strict=True)):
        m = row.cold.median
        phases = (m.trace, m.lower, m.compile, m.first_run, m.unattributed)
        table_rows.append((name, pieces(fmt_duration(m.total), "jitscope.number"),
                           *(fmt_duration(p) for p in phases), *((_cache_cell(row),) if show_cache else ())))
        for k, value in enumerate(phases):
            series[k].append((float(i), max(value or 0.0, 0.0)))
    chart = Chart("bars", "where the first call's time goes", tuple(Series(n, tuple(p)) for n, p in zip(
        PHASES, series, strict=True)), categories=tuple(names), x_unit="seconds")
    columns = _columns("total", *PHASES) + ((Column("disk cache"),) if show_cache else ())
    return Section("first call (cold)", (chart, Table(columns, tuple(table_rows))),
                   "fresh jit wrapper, JAX's in-memory caches cleared", id="cold")


def cached_section(rows: Sequence[BenchRow], names: Sequence[str]) -> Section:
    table_rows = []
    charts: list[Block] = []
    for row, name in zip(rows, names, strict=True):
        s = row.cached.blocked
        median = (pieces(fmt_duration(s.median) + " !", "jitscope.warn") if s.unreliable
                  else pieces(fmt_duration(s.median), "jitscope.number"))
        dispatch = fmt_duration(row.cached.dispatch.median) if row.cached.dispatch else NA
        table_rows.append((name, median, fmt_duration(s.iqr), fmt_duration(s.min),
                           f"{fmt_duration(s.mean)} ± {fmt_duration(s.stddev)}", dispatch, f"{s.rounds}×{s.loops}",
                           f"{s.outliers_iqr};{s.outliers_stddev}"))
        if len(s.samples) > 1:
            charts.append(Chart("distribution", f"{name}: per-call time of each round",
                                (Series(name, tuple((float(i), t) for i, t in enumerate(s.samples))),),
                                y_unit="seconds", caption="box: interquartile range; line: median; dots: rounds"))
    table = Table(_columns("median", "IQR", "min", "mean ± stddev", "dispatch", "rounds×loops", "outliers"),
                  tuple(table_rows))
    wrappers = [note for row, name in zip(rows, names, strict=True) if (note := wrapper_note(row, name))]
    return Section("cached calls", (table, *wrappers, *charts), "every call blocks on every output leaf",
                   id="cached")


def wrapper_note(row: BenchRow, name: str) -> Note | None:
    """What a row's cached figure times when it is a library wrapper's call, and that wrapper's own per-call work
    where it is large (``CachedRecord.wrapper_overhead_large``)."""
    cached = row.cached
    overhead = cached.wrapper_overhead
    if not cached.called or overhead is None or cached.compiled is None:
        return None
    program = fmt_duration(cached.compiled.median)
    if not cached.wrapper_overhead_large:
        return Note(f"{name}: times your {cached.called} call; the compiled program alone: {program}", wrap=True)
    share = overhead / cached.compiled.median if cached.compiled.median > 0 else None
    return Note(f"{name}: times your {cached.called} call; the compiled program alone takes {program}, and the "
                f"wrapper's own work adds {fmt_duration(overhead)} per call"
                + (f" ({share:.0%} of the program's time)" if share is not None else ""), "warning", wrap=True)


def derived_section(rows: Sequence[BenchRow], names: Sequence[str]) -> Section:
    show_peak = any(r.device_peak_bytes is not None for r in rows)
    table_rows = []
    for row, name in zip(rows, names, strict=True):
        d = row.derived
        table_rows.append((name, f"{fmt_count(d.cold_in_calls)} calls" if d.cold_in_calls is not None else NA,
                           fmt_rate(d.flops_per_second, "FLOP"), fmt_rate(d.bytes_per_second, "B"),
                           fmt_bytes(row.memory.peak_bytes if row.memory else None),
                           *((fmt_bytes(row.device_peak_bytes),) if show_peak else ())))
    columns = _columns("1st call =", "FLOP/s", "bytes/s", "XLA memory", *(("device peak",) if show_peak else ()))
    return Section("what it means", (Table(columns, tuple(table_rows)),), id="derived")


def eager_section(rows: Sequence[BenchRow], names: Sequence[str]) -> Section:
    """``--eager``: its own table, so "what it means" stays within 100 columns with every column shown."""
    table_rows = []
    for row, name in zip(rows, names, strict=True):
        eager = row.eager
        stats = eager.stats if eager else None
        speedup = (pieces(f"{eager.speedup:.2f}x", "jitscope.good" if eager.speedup >= 1 else "jitscope.warn")
                   if eager and eager.speedup else NA)
        table_rows.append((name, fmt_duration(stats.median) if stats else ("failed" if eager and eager.error else NA),
                           speedup, f"{fmt_count(row.derived.breakeven_calls)} calls"
                           if row.derived.breakeven_calls is not None else NA))
    return Section("jit against eager", (Table(_columns("eager", "jit speedup", "break-even"), tuple(table_rows)),),
                   "the un-jitted function timed the same way (--eager)", id="eager")


def process_section(rows: Sequence[BenchRow], names: Sequence[str]) -> Section:
    table_rows = []
    for row, name in zip(rows, names, strict=True):
        if row.process is None:
            continue
        mid = sorted(row.process.runs, key=lambda r: r.wall)[len(row.process.runs) // 2]
        table_rows.append((name, pieces(fmt_duration(row.process.median_wall), "jitscope.number"),
                           fmt_duration(mid.startup), fmt_duration(mid.import_jax), fmt_duration(mid.load_target),
                           fmt_duration(mid.make_inputs), fmt_duration(mid.first_call.total),
                           fmt_duration(mid.first_call.compile) + (" (disk hit)" if mid.first_call.cache_hit else "")))
    columns = _columns("process", "startup", "import jax", "load", "inputs", "1st call", "compile")
    return Section("truly cold process", (Table(columns, tuple(table_rows)),),
                   "start python, import jax, load, first call (--cold-process)", id="process")


def row_blocks(rows: Sequence[BenchRow], names: Sequence[str], spelled: Sequence[str]) -> list[Block]:
    """The per-row tables, in display order, after the lines spelling out abbreviated names."""
    blocks: list[Block] = [Note(line, "muted", wrap=True) for line in spelled]
    blocks += [cold_section(rows, names), cached_section(rows, names), derived_section(rows, names)]
    if any(r.eager is not None for r in rows):
        blocks.append(eager_section(rows, names))
    if any(r.process is not None for r in rows):
        blocks.append(process_section(rows, names))
    return blocks


def failures_section(failures: Sequence[BenchFailure]) -> Section:
    rows = []
    for f in failures:
        error = f.error.removeprefix(f"{f.target}({f.call}) ") + (f" ({f.hint})" if f.hint else "")
        rows.append((_labelled(f"{_function(f.target)}({f.call})", f.label), pieces(error, "jitscope.bad")))
    return Section("failed calls", (Table((Column("call"), Column("error")), tuple(rows)),),
                   "recorded, and the run went on", id="failures")


def _fit(points: Sequence[tuple[float, float]], slope: float | None) -> tuple[float, float] | None:
    pts = [(math.log10(x), math.log10(y)) for x, y in points if x > 0 and y > 0]
    if slope is None or len(pts) < 2:
        return None
    mx, my = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
    return slope, my - slope * mx


def scaling_chart(record: ScalingRecord) -> Chart:
    name = _labelled(_function(record.target), record.variant)
    run = tuple((float(p.input_bytes), p.run_seconds) for p in record.points)
    compile_ = tuple((float(p.input_bytes), p.compile_seconds) for p in record.points if p.compile_seconds)
    series = [Series("cached call", run, "bench.run")]
    series += [Series("XLA compile", compile_, "bench.compile")] if compile_ else []
    fits = []
    for s, slope in zip(series, (record.run_slope, record.compile_slope), strict=False):
        fit = _fit(s.points, slope)
        if fit is not None:
            fits.append((s.name, *fit))
    return Chart("loglog", f"{name}: time against input size (log-log)", tuple(series), x_label="input bytes",
                 x_unit="bytes", y_unit="seconds", fits=tuple(fits),
                 caption="slope 1: time grows linearly with input size; 0: fixed cost (dispatch-bound)")


def scaling_section(records: Sequence[ScalingRecord]) -> Section:
    rows = tuple((_labelled(_function(r.target), r.variant),
                  f"{fmt_bytes(r.points[0].input_bytes)} .. {fmt_bytes(r.points[-1].input_bytes)}",
                  fmt_slope(r.run_slope), fmt_slope(r.compile_slope)) for r in records)
    table = Table((Column("target"), Column("inputs", "right"), Column("run-time slope", "right"),
                   Column("compile-time slope", "right")), rows)
    return Section("scaling", (table, *(scaling_chart(r) for r in records)),
                   "slope of log(time) against log(input bytes)", id="scaling")


def comparison_section(comparison: ComparisonRecord) -> Section:
    styles = {"regression": "jitscope.bad", "improvement": "jitscope.good", "new": "jitscope.muted",
              "missing": "jitscope.muted"}
    value = {MEMORY_METRIC: lambda v: fmt_bytes(v) if v is not None else NA}
    rows = tuple((e.key, e.metric, value.get(e.metric, fmt_duration)(e.baseline),
                  value.get(e.metric, fmt_duration)(e.current), fmt_change(e.change),
                  pieces(e.status, styles.get(e.status, ""))) for e in comparison.entries)
    table = Table((Column("call"), Column("metric"), Column("baseline", "right"), Column("now", "right"),
                   Column("change", "right"), Column("")), rows)
    blocks: list[Block] = [table, *(Note(n, "warning", "note", wrap=True) for n in comparison.notes)]
    blocks.append(Note(f"{comparison.regressions} regression(s)", "error") if comparison.regressions
                  else Note("no regressions", "good"))
    return Section(f"compared with {comparison.baseline or 'baseline'}", tuple(blocks),
                   f"regression: more than {comparison.threshold:.0%} slower, or more memory", id="comparison")


def environment_paragraph(report: BenchReport) -> Paragraph:
    env = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in report.environment.items()}
    s = report.settings
    text = (f"jax {env.get('jax', '?')}, jaxlib {env.get('jaxlib', '?')}, backend {env.get('backend', '?')}, "
            f"{env.get('device_count', '?')} x {env.get('device_kind', '?')}, x64 {env.get('x64', '?')}; "
            f"persistent cache {s.persistent_cache} ({s.persistent_cache_source}); budget {s.budget:g} s, "
            f"min {s.min_rounds} rounds, {s.cold_runs} cold run(s), seed {s.seed}; clock {s.clock} "
            f"(step {fmt_duration(s.clock_resolution)}), harness {fmt_duration(s.harness_overhead)}/call"
            + (f"; max warm-up {s.max_warmup:g} s" if s.max_warmup is not None else ""))
    return Paragraph((("environment: ", "jitscope.muted"), (text, "")), wrap=True)


def bench_document(report: BenchReport) -> Document:
    rows = report.rows
    blocks: list[Block] = []
    if not rows and not report.failures:
        blocks.append(Paragraph(pieces("(nothing benchmarked)", "jitscope.muted")))
    if rows:
        names, spelled = display_names(rows)
        tables = row_blocks(rows, names, spelled)
        blocks += tables if spelled else [Fit(tuple(tables), tuple(row_blocks(rows, *display_names(rows, abbreviate=True))))]
    else:
        names = []
    for i, (row, name) in enumerate(zip(rows, names, strict=True), 1):
        if row.compile_time is not None:  # --compile-profile
            from jitscope.report.views.compile_time import compile_time_section

            section = compile_time_section(row.compile_time, f"b{i}")
            blocks.append(replace(section, title=f"compile time: {name}"))
    if report.failures:
        blocks.append(failures_section(report.failures))
    if report.scaling:
        blocks.append(scaling_section(report.scaling))
    warnings = [f"{name}: {w}" for row, name in zip(rows, names, strict=True) for w in row.warnings]
    if warnings or report.warnings:
        blocks.append(Section("", tuple(Note(w, "warning", "warning", wrap=True) for w in [*warnings, *report.warnings])))
    if report.comparison is not None:
        blocks.append(comparison_section(report.comparison))
    closing: list[Block] = [Paragraph(pieces(LEGEND, "jitscope.muted"), wrap=True)] if rows else []
    blocks.append(Section("", (*closing, environment_paragraph(report))))
    targets = ", ".join(dict.fromkeys([r.target for r in rows] + [f.target for f in report.failures]))
    return Document("jitscope bench" + (f": {targets}" if targets else ""), "bench", tuple(blocks))
