"""The exit summary of ``jitscope run`` as plain text, without importing rich.

When stderr is not a terminal (CI logs, ``2> log``, a benchmark) the summary is plain text,
yet rendering it through rich costs 25-35 ms of imports after the program has exited, about
2% of a two-second program. ``plain_summary`` writes the same characters as
``report.writers.run_live.render_summary`` on jitscope's piped console for the common summary: the head
line, the table of the user's functions, the internal compiles, trace-time side effects,
host-device syncs and notes. It gives up (None) on anything else, and rich renders it as before: recompiles (their
cause lines), a table wider than the console, text whose width on a terminal is not its
length (wide or control characters, tabs, newlines) or lines rich might pad or trim.
``tests/run/test_run_plain.py`` keeps the two renderers in agreement.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from jitscope.model.run import USER, RunRecord
from jitscope.run.summary import compiled_functions, compiles_cell, internal_compiles, sync_lines
from jitscope.units import fmt_duration as fmt_time
from jitscope.units import fmt_share

#: The console width when stderr is piped (``report.writers.console.PIPE_WIDTH``; importing it imports rich).
PIPE_WIDTH = 100

#: Characters one column wide for rich: printable ASCII, the "µ" of microseconds, the "—" of effect lines.
_NARROW = frozenset(map(chr, range(32, 127))) | {"µ", "—"}

_HEADERS = ("function", "defined at", "compiles", "trace", "lower", "compile", "share")
_RIGHT = (False, False, True, True, True, True, True)


def plain_stderr() -> bool:
    """Whether jitscope's stderr console would print without colour or styles (not a terminal, colour not forced)."""
    stream = sys.stderr
    if stream is None or os.environ.get("FORCE_COLOR") not in (None, ""):
        return False
    return not bool(getattr(stream, "isatty", lambda: False)())


def _table(rows: Sequence[Sequence[str]], width: int) -> list[str] | None:
    """rich's ``Table(box=None, pad_edge=False, show_edge=False)`` of plain cells, or None if it must wrap."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADERS))]
    if sum(widths) + 2 * (len(widths) - 1) > width:
        return None
    return ["  ".join(cell.rjust(w) if right else cell.ljust(w)
                      for cell, w, right in zip(row, widths, _RIGHT, strict=True)) for row in rows]


def plain_summary(record: RunRecord, width: int = PIPE_WIDTH) -> str | None:
    """The summary as ``render_summary`` prints it on a colourless console ``width`` wide; None: let rich do it."""
    mine = [f for f in record.functions if f.kind == USER]
    if any(f.recompiles for f in mine):
        return None  # cause lines: rich renders them
    total = record.compile_s
    lines = [(f"jitscope run: {record.program}{record.process_label} {record.outcome} "
              f"after {fmt_time(record.wall_s)}; {compiled_functions(record.functions)}, {fmt_time(total)} "
              f"tracing and compiling = {fmt_share(total, record.wall_s)} of wall time")]
    if mine:
        rows = [_HEADERS] + [
            (f.function, str(f.defined_at or "?"), compiles_cell(f), fmt_time(f.trace_s),
             fmt_time(f.lower_s), fmt_time(f.compile_s), fmt_share(f.total_s, record.wall_s)) for f in mine]
        if any(not cell for row in rows for cell in row):
            return None
        table = _table(rows, width)
        if table is None:
            return None
        lines += table
    internal = internal_compiles(record.functions)
    if internal is not None:
        lines.append(internal)
    effects = [e for e in record.events if e.effects]
    if effects:
        seen: dict[str, int] = {}
        for event in effects:
            for effect in event.effects:
                seen[effect.describe()] = seen.get(effect.describe(), 0) + 1
        lines.append("trace-time side effects (they run once per trace, never in the compiled program):")
        lines += [f"  {line}" + (f" [{n} traces]" if n > 1 else "") for line, n in seen.items()]
    lines += sync_lines(record.syncs, record.wall_s)
    lines += [f"note: {note}" for note in record.notes]
    if not record.events:
        lines.append("no JAX traces or compiles were seen")
    if any(not _NARROW.issuperset(line) or line != line.rstrip() for line in lines):
        return None
    return "\n".join(lines) + "\n"
