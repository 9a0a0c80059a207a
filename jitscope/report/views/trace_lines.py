"""``jitscope trace``'s summary of the jaxpr by line of the user's code, like ``profile``'s top lines.

One row per line of the user's code: its source text, the equations it produced (library internals it
called included), its share of XLA's FLOPs and bytes, the library functions it called and its main
primitives; most FLOPs first.
"""

from __future__ import annotations

import os

from jitscope.model.trace import SourceLineRecord, TraceRecord
from jitscope.report.views.document import Block, Column, Fit, Paragraph, Section, Table, pieces
from jitscope.report.views.jaxpr_fold import calls_text
from jitscope.units import NA, fmt_bytes, fmt_count, fmt_fraction, fmt_si
from jitscope.userframes import read_source_lines

#: Lines listed; the rest are summed in one row.
TOP_LINES = 12
#: Characters of a line's source shown.
CODE_WIDTH = 44
#: Primitives and library calls named per line (primitives in a narrow table: the terminal's).
SHOWN = 3
NARROW_SHOWN = 2


def _code(location_file: str, line: int, cache: dict[str, list[str]]) -> str:
    source = cache.get(location_file)
    if source is None:
        source = cache[location_file] = read_source_lines(location_file)
    text = source[line - 1].strip() if 0 < line <= len(source) else ""
    return text if len(text) <= CODE_WIDTH else text[: CODE_WIDTH - 1] + "…"


def _first(items: tuple[str, ...] | list[str], shown: int = SHOWN) -> str:
    return ", ".join(items[:shown]) + (f" +{len(items) - shown}" if len(items) > shown else "")


def _split(call: str) -> tuple[str, str]:
    package, _, function = call.partition(" ")
    return package, function


def _rows(lines: tuple[SourceLineRecord, ...], costs: bool, wide: bool) -> tuple[tuple[str, ...], ...]:
    total = sum(line.flops or 0.0 for line in lines)
    cache: dict[str, list[str]] = {}
    rows = []
    listed = [line for line in lines if line.location is not None][:TOP_LINES]
    rest = [line for line in lines if line.location is not None][TOP_LINES:]
    outside = [line for line in lines if line.location is None]
    groups: list[tuple[str, str, list[SourceLineRecord]]] = [
        (f"{os.path.basename(line.location.file)}:{line.location.line}",
         _code(line.location.file, line.location.line, cache), [line]) for line in listed if line.location]
    if rest:
        groups.append((f"{len(rest)} more lines", "", rest))
    if outside:
        groups.append(("(no line of yours)", "", outside))
    for where, code, group in groups:
        eqns = sum(line.eqns for line in group)
        library = sum(line.library_eqns for line in group)
        named = [f"{name} {n}" for name, n in group[0].primitives] if len(group) == 1 else []
        primitives = _first(named) if wide else ", ".join(named[:NARROW_SHOWN])
        calls = calls_text(tuple(_split(c) for c in group[0].calls), SHOWN) if len(group) == 1 else ""
        row: tuple[str, ...] = (where,) + ((code,) if wide else ())
        row += (fmt_count(eqns),) + ((fmt_count(library) if library else "",) if wide else ())
        if costs:
            flops = sum(line.flops or 0.0 for line in group)
            row += (fmt_si(flops, "FLOP") if total else NA, fmt_fraction(flops / total) if total else "",
                    fmt_bytes(sum(line.bytes or 0.0 for line in group)))
        rows.append(row + ((calls,) if wide else ()) + (primitives,))
    return tuple(rows)


def _table(lines: tuple[SourceLineRecord, ...], costs: bool, wide: bool) -> Table:
    columns = [Column("line"), *([Column("code")] if wide else []), Column("eqns", "right"),
               *([Column("in libraries", "right")] if wide else [])]
    if costs:
        columns += [Column("FLOPs", "right"), Column("share", "right"), Column("bytes", "right")]
    columns += [*([Column("calls into")] if wide else []), Column("primitives")]
    return Table(tuple(columns), _rows(lines, costs, wide))


def lines_section(record: TraceRecord, page: str = "t1") -> Section | None:
    """The jaxpr by line of the user's code; None when the record has no per-line summary."""
    lines = record.source_lines
    if not lines:
        return None
    costs = any(line.flops is not None for line in lines)
    yours = ", ".join(record.source_roots) or "files outside installed packages"
    note = f"your code: {yours}"
    if costs:
        note += "; FLOPs, bytes: XLA's, by HLO source line"
    blocks: list[Block] = [Fit((_table(lines, costs, wide=True),), (_table(lines, costs, wide=False),))]
    if not any(line.location is not None for line in lines):
        blocks.append(Paragraph(pieces("no equation came from a line of your code: all were made in library code "
                                       "(the function traced may be a library's own, as jax.jit(jnp.sin) is); if "
                                       "your code is elsewhere, name its folders in [tool.jitscope] source in "
                                       "pyproject.toml", "jitscope.muted"), wrap=True))
    return Section("jaxpr by line of your code", tuple(blocks), note, id=f"{page}-lines")
