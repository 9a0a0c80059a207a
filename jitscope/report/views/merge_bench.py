"""``bench --processes`` / ``jitscope merge bench.p*.json`` as a view model: stragglers first, then each
call's figures on every process, one row per process, and the skew across them."""

from __future__ import annotations

from jitscope.model.hosts import (
    BenchMergeReport,
    BenchSkew,
    MergedBenchCall,
    ProfileMergeReport,
    TraceMergeReport,
)
from jitscope.report.views.document import Cell, Column, Document, Note, Section, Table, pieces
from jitscope.units import fmt_duration, plural


def where_it_ran(report: BenchMergeReport | ProfileMergeReport | TraceMergeReport) -> str:
    """``2 processes on 1 host, 2 devices; 3 calls``: how every merged view's headline begins."""
    hosts = len({p.host for p in report.processes})
    devices = sum(len(p.local_devices) for p in report.processes)
    return (f"{len(report.processes)} processes on {plural(hosts, 'host')}, {plural(devices, 'device')}; "
            f"{plural(len(report.calls), 'call')}")


def read_first(notes: tuple[Note, ...], calm: str) -> Section:
    """A merged view's first section: its findings, or the one good line ``calm`` when there are none."""
    return Section("Read first", notes or (Note(calm, "good", wrap=True),), id="findings")


def headline(report: BenchMergeReport) -> str:
    rounds = f"; {report.rounds} rounds of one call on each, in lockstep" if report.rounds else ""
    return where_it_ran(report) + rounds


def findings_section(report: BenchMergeReport) -> Section:
    return read_first(tuple(Note(f.text, "warning", "slow", wrap=True) for f in report.findings),
                      "no straggler: every call's skew across processes is within the processes' own spread")


def processes_section(report: BenchMergeReport | ProfileMergeReport | TraceMergeReport) -> Section:
    columns = (Column("process"), Column("host"), Column("devices"), Column("report"))
    rows = tuple((f"p{p.index}", p.host, _devices(p.local_devices), p.file.replace("\\", "/").rsplit("/", 1)[-1])
                 for p in report.processes)
    return Section("Processes", (Table(columns, rows),), id="processes")


def calls_section(report: BenchMergeReport) -> Section:
    columns = (Column("call"), Column("process"), Column("cached median", "right"), Column("q3/q1", "right"),
               Column("compile", "right"), Column("first call", "right"))
    rows: list[tuple[Cell, ...]] = []
    for call in report.calls:
        rows.extend(_call_rows(call))
    return Section("Per process", (Table(columns, tuple(rows)),),
                   note="q3/q1: the spread of a process's own rounds; skew: slowest / fastest, and the slowest",
                   id="calls")


def _call_rows(call: MergedBenchCall) -> list[tuple[Cell, ...]]:
    name = f"{call.target.rsplit(':', 1)[-1]}({call.call})" + (f" [{call.label}]" if call.label else "")
    rows: list[tuple[Cell, ...]] = []
    for i, f in enumerate(call.figures):
        slow_cached = call.cached is not None and call.cached.flagged and call.cached.slowest == f.process
        slow_compile = call.compile is not None and call.compile.flagged and call.compile.slowest == f.process
        median = fmt_duration(f.cached_median_s)
        compile_text = fmt_duration(f.compile_s) if f.compile_s is not None else "-"
        rows.append((name if i == 0 else "", f"p{f.process}",
                     pieces(median, "jitscope.warn") if slow_cached else median,
                     f"{f.cached_q3_s / f.cached_q1_s:.2f}x" if f.cached_q1_s > 0 else "-",
                     pieces(compile_text, "jitscope.warn") if slow_compile else compile_text,
                     fmt_duration(f.cold_s)))
    for index in call.failed_on:
        rows.append((name if not rows else "", f"p{index}", pieces("failed", "jitscope.bad"), "", "", ""))
    rows.append(("", "skew", _skew(call.cached), "", _skew(call.compile), ""))
    return rows


def _skew(skew: BenchSkew | None) -> Cell:
    if skew is None:
        return "-"
    text = f"{skew.ratio:.2f}x p{skew.slowest}"
    return pieces(text + " straggler", "jitscope.warn") if skew.flagged else text


def _devices(devices: tuple[str, ...]) -> str:
    if len(devices) <= 3:
        return ", ".join(devices) or "-"
    return f"{devices[0]} ... {devices[-1]} ({len(devices)})"


def merge_bench_document(report: BenchMergeReport) -> Document:
    blocks = (findings_section(report), calls_section(report), processes_section(report),
              *((Section("Notes", tuple(Note(n, "info", "note", wrap=True) for n in report.notes)),)
                if report.notes else ()))
    return Document("jitscope bench across processes", "merge", blocks, subtitle=headline(report))
