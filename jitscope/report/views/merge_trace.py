"""``trace --processes`` / ``jitscope merge trace.p*.json`` as a view model: programs that differ first (the
likely hang), then each call's program fingerprint and trace/compile times on every process side by side."""

from __future__ import annotations

from jitscope.model.hosts import HANG, SLOW, MergedTraceCall, TraceMergeReport
from jitscope.report.views.document import Cell, Column, Document, Level, Note, Section, Table, pieces
from jitscope.report.views.merge_bench import processes_section, read_first, where_it_ran
from jitscope.units import fmt_duration

_LEVELS: dict[str, tuple[Level, str]] = {HANG: ("error", "hang"), SLOW: ("warning", "slow")}


def headline(report: TraceMergeReport) -> str:
    same = sum(1 for c in report.calls if c.same_program)
    return f"{where_it_ran(report)}, {same} compiled to one program on every process"


def findings_section(report: TraceMergeReport) -> Section:
    return read_first(tuple(Note(f.text, *_LEVELS.get(f.level, ("info", "note")), wrap=True) for f in report.findings),
                      "every process compiled the same program for every call, in about the same time")


def calls_section(report: TraceMergeReport) -> Section:
    columns = (Column("call"), Column("process"), Column("program"), Column("trace", "right"),
               Column("lower", "right"), Column("compile", "right"))
    rows: list[tuple[Cell, ...]] = []
    for call in report.calls:
        rows.extend(_call_rows(call))
    return Section("Per process", (Table(columns, tuple(rows)),),
                   note="program: fingerprint of the optimised HLO, metadata removed", id="calls")


def _call_rows(call: MergedTraceCall) -> list[tuple[Cell, ...]]:
    name = f"{call.target.rsplit(':', 1)[-1]}({call.call})"
    reference = call.programs[0][0] if call.programs else ""
    rows: list[tuple[Cell, ...]] = []
    for i, f in enumerate(call.figures):
        if f.failed:
            program: Cell = pieces("trace failed", "jitscope.bad")
        elif not f.fingerprint:
            program = "-"
        elif f.fingerprint == reference:
            program = f"{'same' if call.same_program else 'common'} {f.fingerprint[:8]}"
        else:
            program = pieces(f"differs {f.fingerprint[:8]}", "jitscope.bad")
        slow = call.compile is not None and call.compile.flagged and call.compile.slowest == f.process
        compile_text = fmt_duration(f.compile_s) if f.compile_s is not None else "-"
        rows.append((name if i == 0 else "", f"p{f.process}", program, fmt_duration(f.trace_s),
                     fmt_duration(f.lower_s) if f.lower_s is not None else "-",
                     pieces(compile_text, "jitscope.warn") if slow else compile_text))
    skew = call.compile
    text = "-" if skew is None else f"{skew.ratio:.2f}x p{skew.slowest}"
    rows.append(("", "skew", "", "", "",
                 pieces(text + " straggler", "jitscope.warn") if skew is not None and skew.flagged else text))
    return rows


def merge_trace_document(report: TraceMergeReport) -> Document:
    blocks = (findings_section(report), calls_section(report), processes_section(report),
              *((Section("Notes", tuple(Note(n, "info", "note", wrap=True) for n in report.notes)),)
                if report.notes else ()))
    return Document("jitscope trace across processes", "merge", blocks, subtitle=headline(report))
