"""Render a ``BenchReport``: cold first call, cached calls, derived figures, scaling, comparison.

Rich renderables built from records only (nothing here imports jax). The same
renderables print as plain text on a colourless console (pipes, NO_COLOR, tests); the
scaling chart switches to ASCII markers when the console cannot encode others.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.containers import Lines
from rich.measure import Measurement
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from jitscope.model.bench import BenchFailure, BenchReport, BenchRow, ComparisonRecord, ScalingRecord
from jitscope.render.progress import progress_bar
from jitscope.view.format import NA, fmt_bytes, fmt_count, fmt_rate, fmt_slope
from jitscope.view.format import fmt_duration as fmt_time

__all__ = ["NA", "fmt_bytes", "fmt_count", "fmt_rate", "fmt_slope", "fmt_time", "render_bench"]

#: Calls longer than this are shown as ``fn #N`` in the tables, with the full call listed once above them.
LONG_CALL = 40


def _call_column(table: Table, names: Sequence[str]) -> None:
    """The first column: wide enough for the longest name."""
    table.add_column("call", overflow="fold", min_width=min(LONG_CALL, max((len(n) for n in names), default=4)))


def display_names(rows: Sequence[BenchRow], *, abbreviate: bool = False) -> tuple[list[str], list[str]]:
    """Names for the table rows, and the lines that spell out abbreviated calls (``#N = fn(...)``).

    Calls are abbreviated when one is longer than ``LONG_CALL`` or when ``abbreviate`` is
    set (the view does that when the full names would push a table past the console width).
    """
    full = [_labelled(f"{_function(r.target)}({r.call})", r.label) for r in rows]
    if not abbreviate and all(len(n) <= LONG_CALL for n in full):
        return full, []
    short = [f"{_function(r.target)} #{i + 1}" for i, r in enumerate(rows)]
    return short, [f"{s} = {f}" for s, f in zip(short, full, strict=True)]


def _function(target: str) -> str:
    """``fn`` of a ``path.py:fn`` or ``pkg.mod:fn`` target."""
    return target.rsplit(":", 1)[-1]


def _labelled(name: str, label: str) -> str:
    """``name [label]``, or ``name`` without a label."""
    return f"{name} [{label}]" if label else name


def _table() -> Table:
    return Table(box=None, pad_edge=False, header_style="jitscope.muted", show_edge=False)


def _section(title: str, table: Table) -> Group:
    """A heading line above a table (a table title would be wrapped to the table's width)."""
    return Group(Text(title, style="jitscope.heading"), table)


def _cold_table(rows: Sequence[BenchRow], names: Sequence[str]) -> tuple[str, Table]:
    title = "first call (cold): fresh jit wrapper, JAX's in-memory caches cleared"
    table = _table()
    _call_column(table, names)
    for head in ("total", "trace", "lower", "compile", "1st run", "other"):
        table.add_column(head, justify="right", style="bench.phase" if head != "total" else "jitscope.number")
    show_cache = any(run.cache_hit is not None for r in rows for run in r.cold.runs)
    if show_cache:
        table.add_column("disk cache")
    for row, name in zip(rows, names, strict=True):
        m = row.cold.median
        cells: list[str | Text] = [Text(name), fmt_time(m.total), fmt_time(m.trace), fmt_time(m.lower),
                                   fmt_time(m.compile), fmt_time(m.first_run), fmt_time(m.unattributed)]
        if show_cache:
            cells.append(_cache_cell(row))
        table.add_row(*cells)
    return title, table


def _cache_cell(row: BenchRow) -> str | Text:
    hits = [run.cache_hit for run in row.cold.runs if run.cache_hit is not None]
    if not hits:
        return NA
    if all(hits):
        return Text("hit", "jitscope.warn")
    return "miss" if not any(hits) else Text(f"{sum(hits)}/{len(hits)} hits", "jitscope.warn")


def _cached_table(rows: Sequence[BenchRow], names: Sequence[str]) -> tuple[str, Table]:
    title = "cached calls: every call blocks on every output leaf"
    table = _table()
    _call_column(table, names)
    for head in ("median", "IQR", "min", "mean ± stddev", "dispatch", "rounds×loops", "outliers"):
        table.add_column(head, justify="right")
    for row, name in zip(rows, names, strict=True):
        s = row.cached.blocked
        median = Text(fmt_time(s.median), "jitscope.warn" if s.unreliable else "jitscope.number")
        if s.unreliable:
            median.append(" !", "jitscope.warn")
        dispatch = fmt_time(row.cached.dispatch.median) if row.cached.dispatch else NA
        table.add_row(Text(name), median, fmt_time(s.iqr), fmt_time(s.min),
                      f"{fmt_time(s.mean)} ± {fmt_time(s.stddev)}", dispatch, f"{s.rounds}×{s.loops}",
                      f"{s.outliers_iqr};{s.outliers_stddev}")
    return title, table


def _derived_table(rows: Sequence[BenchRow], names: Sequence[str]) -> tuple[str, Table]:
    title = "what it means"
    table = _table()
    _call_column(table, names)
    table.add_column("1st call =", justify="right")
    table.add_column("FLOP/s", justify="right")
    table.add_column("bytes/s", justify="right")
    table.add_column("XLA memory", justify="right")
    show_peak = any(r.device_peak_bytes is not None for r in rows)
    if show_peak:
        table.add_column("device peak", justify="right")
    for row, name in zip(rows, names, strict=True):
        d = row.derived
        calls = f"{fmt_count(d.cold_in_calls)} calls" if d.cold_in_calls is not None else NA
        cells: list[str | Text] = [Text(name), calls, fmt_rate(d.flops_per_second, "FLOP"),
                                   fmt_rate(d.bytes_per_second, "B"),
                                   fmt_bytes(row.memory.peak_bytes if row.memory else None)]
        if show_peak:
            cells.append(fmt_bytes(row.device_peak_bytes))
        table.add_row(*cells)
    return title, table


def _eager_table(rows: Sequence[BenchRow], names: Sequence[str]) -> tuple[str, Table]:
    """``--eager``: its own table, so "what it means" stays within 100 columns with every column shown."""
    title = "jit against eager (--eager): the un-jitted function timed the same way"
    table = _table()
    _call_column(table, names)
    for head in ("eager", "jit speedup", "break-even"):
        table.add_column(head, justify="right")
    for row, name in zip(rows, names, strict=True):
        eager, d = row.eager, row.derived
        stats = eager.stats if eager else None
        speedup = Text(f"{eager.speedup:.2f}x", "jitscope.good" if eager.speedup >= 1 else "jitscope.warn") \
            if eager and eager.speedup else Text(NA)
        table.add_row(Text(name), fmt_time(stats.median) if stats else ("failed" if eager and eager.error else NA), speedup,
                      f"{fmt_count(d.breakeven_calls)} calls" if d.breakeven_calls is not None else NA)
    return title, table


def _process_table(rows: Sequence[BenchRow], names: Sequence[str]) -> tuple[str, Table]:
    title = "truly cold process: start python, import jax, load, first call"
    table = _table()
    _call_column(table, names)
    for head in ("process", "startup", "import jax", "load", "inputs", "1st call", "compile"):
        table.add_column(head, justify="right")
    for row, name in zip(rows, names, strict=True):
        if row.process is None:
            continue
        runs = row.process.runs
        mid = sorted(runs, key=lambda r: r.wall)[len(runs) // 2]
        table.add_row(Text(name), Text(fmt_time(row.process.median_wall), "jitscope.number"), fmt_time(mid.startup),
                      fmt_time(mid.import_jax), fmt_time(mid.load_target), fmt_time(mid.make_inputs),
                      fmt_time(mid.first_call.total),
                      fmt_time(mid.first_call.compile) + (" (disk hit)" if mid.first_call.cache_hit else ""))
    return title, table


def _failures_table(failures: Sequence[BenchFailure]) -> Group:
    title = "failed calls: recorded, and the run went on"
    table = _table()
    _call_column(table, [_labelled(f"{_function(f.target)}({f.call})", f.label) for f in failures])
    table.add_column("error", overflow="fold")
    for f in failures:
        prefix = f"{f.target}({f.call}) "
        error = f.error.removeprefix(prefix)
        table.add_row(Text(_labelled(f"{_function(f.target)}({f.call})", f.label)),
                      Text(error + (f" ({f.hint})" if f.hint else ""), "jitscope.bad"))
    return _section(title, table)


def _scaling_table(records: Sequence[ScalingRecord]) -> Group:
    title = "scaling: slope of log(time) against log(input bytes)"
    table = _table()
    table.add_column("target")
    table.add_column("inputs", justify="right")
    table.add_column("run-time slope", justify="right")
    table.add_column("compile-time slope", justify="right")
    for rec in records:
        name = _labelled(_function(rec.target), rec.variant)
        span = f"{fmt_bytes(rec.points[0].input_bytes)} .. {fmt_bytes(rec.points[-1].input_bytes)}"
        table.add_row(Text(name), span, fmt_slope(rec.run_slope), fmt_slope(rec.compile_slope))
    return _section(title, table)


class ScalingChart:
    """A log-log scatter of cached run time and compile time against input size."""

    def __init__(self, record: ScalingRecord, width: int = 56, height: int = 10) -> None:
        self.record = record
        self.width = width
        self.height = height

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        ascii_only = options.ascii_only or not (options.encoding or "").lower().startswith("utf")
        run_mark, compile_mark = ("o", "x") if ascii_only else ("●", "▲")
        pts = self.record.points
        series = [(p.input_bytes, p.run_seconds, run_mark, "bench.run") for p in pts]
        series += [(p.input_bytes, p.compile_seconds, compile_mark, "bench.compile") for p in pts
                   if p.compile_seconds]
        series = [s for s in series if s[0] > 0 and s[1] and s[1] > 0]
        if not series:
            return
        xs = [math.log10(s[0]) for s in series]
        ys = [math.log10(float(s[1] or 0)) for s in series]
        x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
        y0, y1 = min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1
        width = max(16, min(self.width, options.max_width - 12))
        grid: list[list[tuple[str, str]]] = [[(" ", "")] * width for _ in range(self.height)]
        for (_, _, mark, style), x, y in zip(series, xs, ys, strict=True):
            col = round((x - x0) / (x1 - x0) * (width - 1))
            line = self.height - 1 - round((y - y0) / (y1 - y0) * (self.height - 1))
            grid[line][col] = (mark, style)
        name = _labelled(_function(self.record.target), self.record.variant)
        yield Text(f"{name}: time vs input size (log-log)", style="jitscope.muted")
        labels = {0: fmt_time(10**y1), self.height - 1: fmt_time(10**y0)}
        for i, cells in enumerate(grid):
            text = Text(f"{labels.get(i, ''):>9} |", style="jitscope.muted")
            for char, style in cells:
                text.append(char, style=style or None)
            yield text
        yield Text(" " * 10 + "+" + "-" * width, style="jitscope.muted")
        left, right = fmt_bytes(10**x0), fmt_bytes(10**x1)
        yield Text(" " * 11 + left + right.rjust(width - len(left)), style="jitscope.muted")
        legend = Text(" " * 11)
        legend.append(run_mark, "bench.run")
        legend.append(" cached call   ", "jitscope.muted")
        legend.append(compile_mark, "bench.compile")
        legend.append(" XLA compile", "jitscope.muted")
        yield legend


def render_comparison(comparison: ComparisonRecord) -> RenderableType:
    title = (f"compared with {comparison.baseline or 'baseline'} "
             f"(regression: more than {comparison.threshold:.0%} slower)")
    table = _table()
    for head, justify in (("call", "left"), ("metric", "left"), ("baseline", "right"), ("now", "right"),
                          ("change", "right"), ("", "left")):
        table.add_column(head, justify=justify)  # type: ignore[arg-type]
    styles = {"regression": "jitscope.bad", "improvement": "jitscope.good", "new": "jitscope.muted",
              "missing": "jitscope.muted", "same": ""}
    for e in comparison.entries:
        change = f"{e.change:+.1%}" if e.change is not None else NA
        table.add_row(Text(e.key), e.metric, fmt_time(e.baseline), fmt_time(e.current), change,
                      Text(e.status, styles.get(e.status) or ""))
    parts: list[RenderableType] = [_section(title, table)]
    parts += [Text(f"note: {n}", style="jitscope.warn") for n in comparison.notes]
    verdict = (Text(f"{comparison.regressions} regression(s)", "jitscope.bad") if comparison.regressions
               else Text("no regressions", "jitscope.good"))
    parts.append(verdict)
    return Group(*parts)


def _env_value(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def render_environment(report: BenchReport) -> Text:
    env, s = {k: _env_value(v) for k, v in report.environment.items()}, report.settings
    text = Text("environment: ", style="jitscope.muted")
    text.append(f"jax {env.get('jax', '?')}, jaxlib {env.get('jaxlib', '?')}, backend {env.get('backend', '?')}, "
                f"{env.get('device_count', '?')} x {env.get('device_kind', '?')}, x64 {env.get('x64', '?')}; "
                f"persistent cache {s.persistent_cache} ({s.persistent_cache_source}); budget {s.budget:g} s, "
                f"min {s.min_rounds} rounds, {s.cold_runs} cold run(s), seed {s.seed}; clock {s.clock} "
                f"(step {fmt_time(s.clock_resolution)}), harness {fmt_time(s.harness_overhead)}/call"
                + (f"; max warm-up {s.max_warmup:g} s" if s.max_warmup is not None else ""))
    return text


_LEGEND = (
    "trace/lower/compile: JAX's monitoring events; 1st run: end of compile until outputs ready; other: "
    "the rest of the first call (no event covers it). median/IQR/min/mean: per call over rounds; dispatch: "
    "until the call returned, not waiting for results (small CPU programs run inside the call, so it is close "
    "to the blocked time); outliers: beyond 1.5 IQR; beyond 1 stddev. Before the timed rounds, warm-up runs "
    "until two consecutive windows of rounds agree within 5% (a steady state; at most --max-warmup). "
    "1st call = N calls: cold minus cached, in cached calls. Cold calls run in this (warm) process after one "
    "throwaway compile; --cold-process measures a new process, imports included."
)


class BenchView:
    """The whole report, laid out for the console's width.

    Tables never lose columns: when full call names would make one wider than the console,
    the names are abbreviated (``fn #N``, spelled out once above the tables). Prose (notes,
    legend, environment) is wrapped to the width, which is 100 columns when piped.
    """

    def __init__(self, report: BenchReport, *, legend: bool = True) -> None:
        self.report = report
        self.legend = legend

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        report, rows, width = self.report, self.report.rows, options.max_width
        yield Rule(Text("jitscope bench", style="jitscope.title"), align="left", characters="━")
        if not rows and not report.failures:
            yield Text("(nothing benchmarked)", style="jitscope.muted")
        names, spelled = display_names(rows)
        tables = _row_tables(rows, names)
        if not spelled and any(_too_wide(console, options, table) for _, table in tables):
            names, spelled = display_names(rows, abbreviate=True)
            tables = _row_tables(rows, names)
        for line in spelled:
            yield from _wrapped(console, Text(line, style="jitscope.muted"), width)
        for i, (title, table) in enumerate(tables):
            if i:
                yield Text()
            yield _section(title, table)
        if report.failures:
            if rows:
                yield Text()
            yield _failures_table(report.failures)
        if report.scaling:
            yield Text()
            yield _scaling_table(report.scaling)
            for rec in report.scaling:
                yield Text()
                yield ScalingChart(rec)
        notes = [(name, w) for row, name in zip(rows, names, strict=True) for w in row.warnings]
        notes += [("", w) for w in report.warnings]
        if notes:
            yield Text()
            for name, note in notes:
                text = Text(f"warning: {name + ': ' if name else ''}{note}", style="jitscope.warn")
                yield from _wrapped(console, text, width)
        if report.comparison is not None:
            yield Text()
            yield render_comparison(report.comparison)
        yield Text()
        if self.legend and rows:
            yield from _wrapped(console, Text(_LEGEND, style="jitscope.muted"), width)
        yield from _wrapped(console, render_environment(report), width)


def _row_tables(rows: Sequence[BenchRow], names: Sequence[str]) -> list[tuple[str, Table]]:
    """(title, table) for each per-row table, in display order."""
    if not rows:
        return []
    tables = [_cold_table(rows, names), _cached_table(rows, names), _derived_table(rows, names)]
    if any(r.eager is not None for r in rows):
        tables.append(_eager_table(rows, names))
    if any(r.process is not None for r in rows):
        tables.append(_process_table(rows, names))
    return tables


def _too_wide(console: Console, options: ConsoleOptions, table: Table) -> bool:
    return Measurement.get(console, options.update(max_width=10_000), table).maximum > options.max_width


def _wrapped(console: Console, text: Text, width: int) -> Lines:
    """``text`` wrapped to ``width``: explicit lines, so a soft-wrapping (piped) console keeps them."""
    lines = text.wrap(console, max(20, width))
    for line in lines:
        line.rstrip()
    return lines


def render_bench(report: BenchReport, *, legend: bool = True) -> RenderableType:
    """The whole report as one renderable."""
    return BenchView(report, legend=legend)


def bench_progress(console: Console) -> contextlib.AbstractContextManager[Callable[[float, int, str], None]]:
    """A transient progress bar on ``console`` (stderr) when it is a terminal; otherwise a no-op callback."""
    return progress_bar(console, "jitscope bench")
