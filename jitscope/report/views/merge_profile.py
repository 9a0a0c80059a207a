"""``profile --processes`` / ``jitscope merge profile.p*.json`` as a view model: stragglers first, then per
call its device time on every process (compute, collectives, the rest) and its top source lines, every
process's time side by side (with its share of that process's device time) and the skew across them."""

from __future__ import annotations

from jitscope.model.hosts import BenchSkew, MergedProfileCall, ProfileMergeReport
from jitscope.report.views.document import Cell, Column, Document, Note, Section, Table, pieces
from jitscope.report.views.merge_bench import processes_section, read_first, where_it_ran
from jitscope.report.views.profile import short_location
from jitscope.units import fmt_duration, fmt_fraction


def headline(report: ProfileMergeReport) -> str:
    rounds = f"{report.rounds} timed rounds and " if report.rounds else ""
    return f"{where_it_ran(report)}; {rounds}{report.captured} profiled calls on each, in lockstep"


def findings_section(report: ProfileMergeReport) -> Section:
    return read_first(tuple(Note(f.text, "warning", "slow", wrap=True) for f in report.findings),
                      "no straggler: every call's device time and top lines are within the processes' own spread")


def _name(call: MergedProfileCall) -> str:
    return f"{call.target.rsplit(':', 1)[-1]}({call.call})" + (f" [{call.label}]" if call.label else "")


def call_section(call: MergedProfileCall) -> Section:
    """One call: each process's device time and its split, then the top lines with every process's time."""
    lines = Section("Top lines", (lines_table(call),), note="time per call and share of the process's device time",
                    level=3)
    return Section(_name(call), (totals_table(call), lines), note="per call; collectives: waiting included",
                   id="calls")


def totals_table(call: MergedProfileCall) -> Table:
    columns = (Column("process"), Column("device", "right"), Column("compute", "right"),
               Column("collectives", "right"), Column("other", "right"), Column("measured", "right"),
               Column("q3/q1", "right"))
    rows: list[tuple[Cell, ...]] = []
    for t in call.totals:
        slow = call.compute is not None and call.compute.flagged and call.compute.slowest == t.process
        compute = fmt_duration(t.compute_s)
        rows.append((f"p{t.process}", fmt_duration(t.device_s), pieces(compute, "jitscope.warn") if slow else compute,
                     fmt_duration(t.collective_s) if t.collective_s else "-",
                     fmt_duration(t.other_s) if t.other_s else "-", fmt_duration(t.measured_s),
                     f"{t.measured_q3_s / t.measured_q1_s:.2f}x" if t.measured_q1_s > 0 else "-"))
    for index in call.failed_on:
        rows.append((f"p{index}", pieces("failed", "jitscope.bad"), "", "", "", "", ""))
    rows.append(("skew", _skew(call.device), _skew(call.compute), "", "", "", ""))
    return Table(columns, tuple(rows))


def lines_table(call: MergedProfileCall) -> Table:
    order = [t.process for t in call.totals]
    columns = (Column("line"), *(Column(f"p{i}", "right") for i in order), Column("skew", "right"))
    rows: list[tuple[Cell, ...]] = []
    for line in call.lines:
        where = short_location(line.location) + ("" if line.in_function else f" ({line.location.function or '?'})")
        cells: list[Cell] = []
        for f in line.figures:
            text = f"{fmt_duration(f.seconds)} {fmt_fraction(f.share)}" if f.seconds else "-"
            slow = line.skew is not None and line.skew.flagged and line.skew.slowest == f.process
            cells.append(pieces(text, "jitscope.warn") if slow else text)
        rows.append((where, *cells, _skew(line.skew)))
    return Table(columns, tuple(rows))


def _skew(skew: BenchSkew | None) -> Cell:
    if skew is None:
        return "-"
    text = f"{skew.ratio:.2f}x p{skew.slowest}"
    return pieces(text + " straggler", "jitscope.warn") if skew.flagged else text


def merge_profile_document(report: ProfileMergeReport) -> Document:
    blocks = (findings_section(report), *(call_section(call) for call in report.calls),
              processes_section(report),
              *((Section("Notes", tuple(Note(n, "info", "note", wrap=True) for n in report.notes)),)
                if report.notes else ()))
    return Document("jitscope profile across processes", "merge", blocks, subtitle=headline(report))
