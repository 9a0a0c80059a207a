"""``jitscope bench`` records as a view model: tables, cold-call phase bars, cached-call distributions,
log-log scaling charts with their fitted slopes, and the baseline comparison.

The terminal keeps ``render/bench.py`` (it adapts its tables to the console width and draws an
ASCII scaling chart); Markdown and HTML render this view.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from jitscope.model.bench import BenchReport, BenchRow, ComparisonRecord, ScalingRecord
from jitscope.render.bench import display_names
from jitscope.view.format import NA, fmt_bytes, fmt_change, fmt_count, fmt_duration, fmt_rate, fmt_slope
from jitscope.view.model import Block, Chart, Column, Document, Note, Section, Series, Table, pieces

PHASES = ("trace", "lower", "compile", "1st run", "other")


def _right(*names: str) -> tuple[Column, ...]:
    return (Column("call"), *(Column(n, "right") for n in names))


def cold_section(rows: Sequence[BenchRow], names: Sequence[str]) -> Section:
    table_rows = []
    series: list[list[tuple[float, float]]] = [[] for _ in PHASES]
    for i, (row, name) in enumerate(zip(rows, names, strict=True)):
        m = row.cold.median
        phases = (m.trace, m.lower, m.compile, m.first_run, m.unattributed)
        table_rows.append((name, fmt_duration(m.total), *(fmt_duration(p) for p in phases)))
        for k, value in enumerate(phases):
            series[k].append((float(i), max(value or 0.0, 0.0)))
    chart = Chart("bars", "where the first call's time goes", tuple(Series(n, tuple(p)) for n, p in zip(
        PHASES, series, strict=True)), categories=tuple(names), x_unit="seconds")
    table = Table(_right("total", *PHASES), tuple(table_rows))
    return Section("first call (cold)", (chart, table), "fresh jit wrapper, JAX's in-memory caches cleared", id="cold")


def cached_section(rows: Sequence[BenchRow], names: Sequence[str]) -> Section:
    table_rows = []
    charts: list[Block] = []
    for row, name in zip(rows, names, strict=True):
        s = row.cached.blocked
        median = fmt_duration(s.median) + (" !" if s.unreliable else "")
        dispatch = fmt_duration(row.cached.dispatch.median) if row.cached.dispatch else NA
        table_rows.append((name, median, fmt_duration(s.iqr), fmt_duration(s.min),
                           f"{fmt_duration(s.mean)} ± {fmt_duration(s.stddev)}", dispatch, f"{s.rounds}×{s.loops}"))
        if len(s.samples) > 1:
            charts.append(Chart("distribution", f"{name}: per-call time of each round",
                                (Series(name, tuple((float(i), t) for i, t in enumerate(s.samples))),),
                                y_unit="seconds", caption="box: interquartile range; line: median; dots: rounds"))
    table = Table(_right("median", "IQR", "min", "mean ± stddev", "dispatch", "rounds×loops"), tuple(table_rows))
    return Section("cached calls", (table, *charts), "every call blocks on every output leaf", id="cached")


def derived_section(rows: Sequence[BenchRow], names: Sequence[str]) -> Section:
    table_rows = []
    for row, name in zip(rows, names, strict=True):
        d = row.derived
        table_rows.append((name, f"{fmt_count(d.cold_in_calls)} calls" if d.cold_in_calls is not None else NA,
                           fmt_rate(d.flops_per_second, "FLOP"), fmt_rate(d.bytes_per_second, "B"),
                           fmt_bytes(row.memory.peak_bytes if row.memory else None)))
    table = Table(_right("1st call =", "FLOP/s", "bytes/s", "XLA memory"), tuple(table_rows))
    return Section("what it means", (table,), id="derived")


def eager_section(rows: Sequence[BenchRow], names: Sequence[str]) -> Section:
    table_rows = []
    for row, name in zip(rows, names, strict=True):
        eager = row.eager
        stats = eager.stats if eager else None
        table_rows.append((name, fmt_duration(stats.median) if stats else NA,
                           f"{eager.speedup:.2f}x" if eager and eager.speedup else NA,
                           f"{fmt_count(row.derived.breakeven_calls)} calls"
                           if row.derived.breakeven_calls is not None else NA))
    return Section("jit against eager", (Table(_right("eager", "jit speedup", "break-even"), tuple(table_rows)),),
                   id="eager")


def _fit(points: Sequence[tuple[float, float]], slope: float | None) -> tuple[float, float] | None:
    pts = [(math.log10(x), math.log10(y)) for x, y in points if x > 0 and y > 0]
    if slope is None or len(pts) < 2:
        return None
    mx, my = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
    return slope, my - slope * mx


def scaling_chart(record: ScalingRecord) -> Chart:
    name = record.target.rsplit(":", 1)[-1] + (f" [{record.variant}]" if record.variant else "")
    run = tuple((float(p.input_bytes), p.run_seconds) for p in record.points)
    compile_ = tuple((float(p.input_bytes), p.compile_seconds) for p in record.points if p.compile_seconds)
    series = [Series("cached call", run)] + ([Series("XLA compile", compile_)] if compile_ else [])
    fits = []
    for s, slope in zip(series, (record.run_slope, record.compile_slope), strict=False):
        fit = _fit(s.points, slope)
        if fit is not None:
            fits.append((s.name, *fit))
    return Chart("loglog", f"{name}: time against input size (log-log)", tuple(series), x_label="input bytes",
                 x_unit="bytes", y_unit="seconds", fits=tuple(fits),
                 caption="slope 1: time grows linearly with input size; 0: fixed cost (dispatch-bound)")


def scaling_section(records: Sequence[ScalingRecord]) -> Section:
    rows = tuple((r.target.rsplit(":", 1)[-1] + (f" [{r.variant}]" if r.variant else ""),
                  f"{fmt_bytes(r.points[0].input_bytes)} .. {fmt_bytes(r.points[-1].input_bytes)}",
                  fmt_slope(r.run_slope), fmt_slope(r.compile_slope)) for r in records)
    table = Table((Column("target"), Column("inputs", "right"), Column("run-time slope", "right"),
                   Column("compile-time slope", "right")), rows)
    return Section("scaling", (table, *(scaling_chart(r) for r in records)),
                   "slope of log(time) against log(input bytes)", id="scaling")


def comparison_section(comparison: ComparisonRecord) -> Section:
    styles = {"regression": "jitscope.bad", "improvement": "jitscope.good"}
    rows = tuple((e.key, e.metric, fmt_duration(e.baseline), fmt_duration(e.current), fmt_change(e.change),
                  pieces(e.status, styles.get(e.status, ""))) for e in comparison.entries)
    table = Table((Column("call"), Column("metric"), Column("baseline", "right"), Column("now", "right"),
                   Column("change", "right"), Column("")), rows)
    blocks: list[Block] = [table, *(Note(n, "warning", "note") for n in comparison.notes)]
    blocks.append(Note(f"{comparison.regressions} regression(s)", "error") if comparison.regressions
                  else Note("no regressions", "good"))
    return Section(f"compared with {comparison.baseline or 'baseline'}", tuple(blocks),
                   f"regression: more than {comparison.threshold:.0%} slower", id="comparison")


def bench_document(report: BenchReport) -> Document:
    rows = report.rows
    names, spelled = display_names(rows)
    blocks: list[Block] = [Note(line, "muted") for line in spelled]
    if rows:
        blocks += [cold_section(rows, names), cached_section(rows, names), derived_section(rows, names)]
        if any(r.eager is not None for r in rows):
            blocks.append(eager_section(rows, names))
    if report.failures:
        failures = tuple((f.key, f.error + (f" ({f.hint})" if f.hint else "")) for f in report.failures)
        blocks.append(Section("failed calls", (Table((Column("call"), Column("error")), failures),),
                              "recorded, and the run went on", id="failures"))
    if report.scaling:
        blocks.append(scaling_section(report.scaling))
    if report.comparison is not None:
        blocks.append(comparison_section(report.comparison))
    warnings = [f"{name}: {w}" for row, name in zip(rows, names, strict=True) for w in row.warnings]
    blocks += [Note(w, "warning", "warning") for w in [*warnings, *report.warnings]]
    s = report.settings
    meta = tuple((str(k), str(v).lower() if isinstance(v, bool) else str(v)) for k, v in report.environment.items())
    meta += (("budget", f"{s.budget:g} s"), ("min rounds", str(s.min_rounds)), ("cold runs", str(s.cold_runs)),
             ("seed", str(s.seed)), ("persistent cache", s.persistent_cache), ("clock", s.clock),
             ("harness", fmt_duration(s.harness_overhead) + "/call"))
    title = "jitscope bench: " + ", ".join(dict.fromkeys([r.target for r in rows] + [f.target for f in report.failures]))
    return Document(title, "bench", tuple(blocks), meta=meta)
