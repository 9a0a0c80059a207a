"""The compile-time section of ``trace`` and ``bench``: the cold compile by line of the user's code (the
costliest first, with what to do) and, with ``--compile-profile``, by XLA phase with the top passes."""

from __future__ import annotations

import os

from jitscope.model.compile import CompileLine, CompileTimeRecord
from jitscope.profiling.compile_lines import SHOWN_COPIES
from jitscope.report.views.document import Block, Column, KeyValues, Note, Section, Table
from jitscope.units import fmt_duration, fmt_fraction

#: Lines listed; the rest are left to the JSON.
TOP_LINES = 8


def _where(line: CompileLine) -> str:
    if line.location is None:
        return "(no line of yours)"
    return f"{os.path.basename(line.location.file)}:{line.location.line}"


def _made(line: CompileLine) -> str:
    """``180 eqns, 180 HLO (94% of the program), 60 copies``."""
    text = f"{line.eqns} eqns, {line.hlo_instructions} HLO ({fmt_fraction(line.hlo_share)} of the program)"
    return text + (f", {line.copies} copies" if line.copies >= SHOWN_COPIES else "")


def _lines_table(record: CompileTimeRecord) -> Table:
    timed = record.profiled and any(line.compile_seconds is not None for line in record.lines)
    columns = [Column("line"), Column("what it made")]
    if timed:
        columns += [Column("compile", "right"), Column("share", "right"), Column("tracing", "right"),
                    Column("codegen", "right")]
    rows = []
    for line in record.lines[:TOP_LINES]:
        row: tuple[str, ...] = (_where(line), _made(line))
        if timed:
            row += (fmt_duration(line.compile_seconds), fmt_fraction(line.compile_share or 0.0),
                    fmt_duration(line.trace_seconds), fmt_duration(line.codegen_seconds))
        rows.append(row)
    return Table(tuple(columns), tuple(rows))


def _stages(record: CompileTimeRecord) -> KeyValues:
    rows = [("tracing", fmt_duration(record.trace_seconds)), ("lowering", fmt_duration(record.lower_seconds)),
            ("XLA compile", fmt_duration(record.compile_seconds))]
    if record.persistent_cache:
        rows.append(("persistent cache", "hit (served from disk)" if record.persistent_cache == "hit" else "miss"))
    return KeyValues(tuple(rows))


def _phases(record: CompileTimeRecord) -> list[Block]:
    if not record.phases:
        return []
    total = record.phase_total or 1.0
    phases = Table((Column("XLA phase"), Column("time", "right"), Column("share", "right")),
                   tuple((p.name, fmt_duration(p.seconds), fmt_fraction(p.seconds / total)) for p in record.phases),
                   title="by XLA phase")
    passes = Table((Column("pass"), Column("own time", "right"), Column("runs", "right")),
                   tuple((p.name, fmt_duration(p.seconds), str(p.runs)) for p in record.passes),
                   title="top passes (all threads)")
    return [phases, passes]


def compile_time_section(record: CompileTimeRecord, page: str = "t1") -> Section:
    """The cold compile by line (and by phase); advice for the top lines, measured or a rule of thumb."""
    blocks: list[Block] = [_stages(record)]
    if record.failure:
        blocks.append(Note(f"the compile failed: {record.failure}", "error", "error", wrap=True))
    blocks += [Note(note, "info", wrap=True) for note in record.notes]
    if record.lines:
        blocks.append(_lines_table(record))
    for line in record.lines:
        if line.advice:
            blocks.append(Note(f"{_where(line)}: {line.advice} ({line.advice_basis})", "info", "fix", wrap=True))
    blocks += _phases(record)
    note = ("times: --compile-profile (the line's share: measured tracing and codegen, the rest of XLA split by "
            "HLO instructions)" if record.profiled else "counts only; --compile-profile times them")
    return Section("compile time", tuple(blocks), note, id=f"{page}-compile-time")
