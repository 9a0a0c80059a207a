"""``jitscope profile`` records as a view model: top lines, the source listing with a heat bar per line
(helpers' lines folded under their call line), top HLO ops, and where the rest of the call's time goes.

Every back end renders it: the heat bar is text (``█▌``) so the terminal, Markdown and plain text show
it too; ``CodeLine.heat`` carries the same weight for a back end that colours lines.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from jitscope.model.common import Location
from jitscope.model.profile import LineRecord, OpRecord, ProfileReport, ProfileRow
from jitscope.report.views.document import (
    Block,
    CodeLine,
    CodeListing,
    Column,
    Document,
    KeyValues,
    Note,
    Paragraph,
    Section,
    Table,
    pieces,
)
from jitscope.report.views.links import src_key
from jitscope.report.views.sharding import communication_split
from jitscope.units import NA, fmt_bytes, fmt_count, fmt_duration, fmt_fraction, fmt_rate, fmt_si
from jitscope.userframes import read_source_lines

#: Width of a heat bar in characters; eighths of a character give it 80 steps.
BAR = 10
_EIGHTHS = " ▏▎▍▌▋▊▉"
#: Lines in the top-lines table, ops in the ops table.
TOP_LINES = 10
TOP_OPS = 12


def heat_bar(fraction: float, width: int = BAR) -> str:
    """``fraction`` (0..1) as a bar of ``width`` characters: ``█████▌    ``."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(width)


def short_location(location: Location, home: str = "") -> str:
    """``18`` for a line of the profiled function's file ``home``, else ``helpers.py:12``.

    A line of an installed library keeps its package path (``flax/nnx/compilation.py:1023``), so it
    is not read as a file of the user's.
    """
    if home and location.file == home:
        return str(location.line)
    parts = location.file.replace("\\", "/").split("/")
    installed = max((i for i, part in enumerate(parts) if part in _INSTALLED), default=-1)
    name = "/".join(parts[installed + 1:]) if installed >= 0 else os.path.basename(location.file)
    return f"{name}:{location.line}"


#: Folders that hold installed packages: a path below one is shown from the package down.
_INSTALLED = frozenset({"site-packages", "dist-packages"})


#: The share-of-peak columns, shown only for a device whose peaks are known (``ProfileRow.peak``).
PEAK_COLUMNS = (Column("% peak FLOP/s", "right"), Column("% peak B/s", "right"))


def _of_peak(record: LineRecord | OpRecord, known: bool) -> tuple[str, ...]:
    if not known:
        return ()
    return tuple(fmt_fraction(s) if s is not None else NA for s in (record.flops_peak_share, record.bytes_peak_share))


def _line_row(line: LineRecord, home: str, known: bool = False) -> tuple[str, ...]:
    where = short_location(line.location, home) + ("" if line.in_function else f" ({line.location.function or '?'})")
    return (where, fmt_duration(line.seconds), fmt_fraction(line.share), fmt_count(line.ops),
            fmt_si(line.flops, "FLOP") if line.flops else NA, fmt_bytes(line.bytes),
            fmt_rate(line.flops_per_second, "FLOP"), fmt_rate(line.bytes_per_second, "B"),
            *_of_peak(line, known), ", ".join(line.primitives[:4]))


def top_lines(row: ProfileRow) -> Table:
    known = row.peak is not None
    columns = (Column("line"), Column("time/call", "right"), Column("share", "right"), Column("ops", "right"),
               Column("FLOPs", "right"), Column("bytes", "right"), Column("FLOP/s", "right"),
               Column("bytes/s", "right"), *(PEAK_COLUMNS if known else ()), Column("primitives"))
    return Table(columns, tuple(_line_row(line, row.function.file, known) for line in row.lines[:TOP_LINES]))


def _op_row(op: OpRecord, home: str, known: bool = False) -> tuple[str, ...]:
    lines = ", ".join(f"{short_location(p.location, home)} ({fmt_fraction(p.share)})" for p in op.lines[:4])
    more = f" +{len(op.lines) - 4}" if len(op.lines) > 4 else ""
    kind = op.opcode + (f" {op.fusion_kind}" if op.fusion_kind else "")
    return (op.name, kind or "?", op.category, fmt_duration(op.seconds), fmt_fraction(op.share), fmt_count(op.events),
            fmt_si(op.flops, "FLOP") if op.flops else NA, fmt_bytes(op.bytes), *_of_peak(op, known),
            (lines + more) or "no source")


def top_ops(row: ProfileRow) -> Table:
    known = row.peak is not None
    columns = (Column("op"), Column("kind"), Column("class"), Column("time/call", "right"), Column("share", "right"),
               Column("runs", "right"), Column("FLOPs", "right"), Column("bytes", "right"),
               *(PEAK_COLUMNS if known else ()), Column("from lines"))
    return Table(columns, tuple(_op_row(op, row.function.file, known) for op in row.ops[:TOP_OPS]))


def peak_note(row: ProfileRow) -> Note | None:
    """Which peaks the "% peak" columns are shares of, and why f32 matmuls can pass 100%."""
    peak = row.peak
    if peak is None:
        return None
    rates = ", ".join(f"{fmt_rate(rate, 'FLOP')} {dtype}" for dtype, rate in peak.flops.items())
    text = (f"% peak: achieved over the published dense peaks of {peak.device} ({peak.source}): {rates}, "
            f"{fmt_rate(peak.bytes_per_second, 'B')} memory; FLOPs are compared with the peak of their result's "
            "element type (f32 with the f32 peak)")
    if "tf32" in peak.flops:
        text += ("; at JAX's default matmul precision f32 matmuls may run as TF32 on tensor cores, whose higher "
                 "ceiling can put them above 100%")
    return Note(text, "muted")


def heat_pieces(value: float, share: float, top: float, fmt: Callable[[float], str]) -> tuple[tuple[str, str], ...]:
    """A heat bar for ``value`` against the ``top`` line, then the value (``fmt``) and its share."""
    if value <= 0:
        return ((" " * (BAR + 16), ""),)  # the width of a bar and its " 1.24 ms  87% "
    style = "jitscope.bad" if share >= 0.5 else "jitscope.warn" if share >= 0.1 else "jitscope.muted"
    return ((heat_bar(value / top if top > 0 else 0.0), style),
            (f" {fmt(value):>9} {fmt_fraction(share):>4} ", "jitscope.number"))


def heat_listing(function: Location, last_line: int, lines: Sequence[Any], value: Callable[[Any], float],
                 total: float, fmt: Callable[[float], str], listing_id: str) -> CodeListing | None:
    """A function's source, each line with a heat bar of its ``value`` (seconds for ``profile``, bytes for
    ``memory``); helpers' lines folded under the line that called them. ``total`` is what shares are of."""
    text = read_source_lines(function.file)
    if not text or last_line < function.line:
        return None
    by_line = {line.location.line: line for line in lines if line.in_function}
    top = max((value(line) for line in lines), default=0)
    out: list[CodeLine] = []
    for n in range(function.line, min(last_line, len(text)) + 1):
        line = by_line.get(n)
        amount, share = (value(line), line.share) if line else (0, 0.0)
        # a helper's lines in the order they read (the record keeps them by weight)
        nested = sorted(line.nested, key=lambda x: (x.location.file, x.location.line)) if line else ()
        code = text[n - 1].rstrip().expandtabs(4)
        out.append(CodeLine((*heat_pieces(amount, share, top, fmt), (code, "")), number=n,
                            src=src_key(function.file, n), mark=bool(line) and amount == top,
                            heat=amount / top if top > 0 and line else None, fold=1 if nested else 0))
        for i, inner in enumerate(nested):
            helper = f"{inner.location.function or '?'} ({short_location(inner.location)})"
            source = read_source_lines(inner.location.file)
            body = source[inner.location.line - 1].strip() if 0 < inner.location.line <= len(source) else ""
            out.append(CodeLine((*heat_pieces(value(inner), value(inner) / (total or 1), top, fmt),
                                 (f"    ↳ {helper}: {body}", "jitscope.muted")),
                                src=src_key(inner.location.file, inner.location.line),
                                heat=value(inner) / top if top > 0 else None,
                                unfold=1 if i == len(nested) - 1 else 0))
    return CodeListing(tuple(out), "python", title=os.path.relpath(function.file), id=listing_id)


def source_listing(row: ProfileRow) -> CodeListing | None:
    """The profiled function's source, each line with its heat bar; helpers' lines folded under their call line."""
    return heat_listing(row.function, row.last_line, row.lines, lambda line: line.seconds, row.device_time,
                        fmt_duration, "profile-source")


def _outside(row: ProfileRow) -> Block | None:
    lines = [line for line in row.lines if not line.in_function]
    if not lines:
        return None
    return Table((Column("line outside the function"), Column("function"), Column("time/call", "right"),
                  Column("share", "right")),
                 tuple((short_location(line.location, row.function.file), line.location.function, fmt_duration(line.seconds),
                        fmt_fraction(line.share)) for line in lines))


def reconciliation(row: ProfileRow) -> tuple[Block, ...]:
    rec = row.reconciliation
    rows = (
        ("device time on source lines", fmt_duration(rec.lines)),
        ("device time with no source line", fmt_duration(rec.no_source)),
        ("device idle between the program's ops", fmt_duration(rec.idle)),
        ("copies and transfers (device memcpy)", fmt_duration(rec.copies)),
        ("host: dispatch, launch, argument handling (measured − device span)", fmt_duration(rec.host)),
        ("sum of the parts", fmt_duration(rec.total)),
        ("measured per call (bench's cached median, no profiler)", fmt_duration(rec.measured)),
        ("per call while profiled", fmt_duration(rec.profiled_wall)),
    )
    verdict = (Note(f"the parts add up to the measured time within ±{rec.tolerance:.0%} "
                    f"({rec.difference:+.1%})", "good") if rec.reconciles else
               Note(f"the parts differ from the measured time by {rec.difference:+.1%} (more than "
                    f"±{rec.tolerance:.0%})" + (": the program ran slower while the profiler watched; the shares "
                                                "of lines and ops still hold, their absolute times are inflated"
                                                if rec.difference > 0 else ""), "warning", "warning"))
    return KeyValues(rows), verdict


def row_section(row: ProfileRow) -> Section:
    rec = row.reconciliation
    device = row.device_time
    on_lines = rec.lines / (rec.lines + rec.no_source) if rec.lines + rec.no_source > 0 else 0.0
    headline = (f"{fmt_duration(device)} of device time per call ({row.events_from}, {row.calls} calls profiled), "
                f"{fmt_fraction(on_lines)} of it on source lines; a call takes {fmt_duration(rec.measured)} without "
                "the profiler")
    blocks: list[Block] = [Paragraph(pieces(headline))]
    if row.lines:
        blocks.append(Section("top source lines", (top_lines(row),), "device time per call", id="profile-lines"))
    listing = source_listing(row)
    if listing is not None:
        blocks.append(Section("source", (listing,), "heat: device time per line; ↳ lines of helpers called there",
                              gap=True, id="profile-listing"))
    outside = _outside(row)
    if outside is not None:
        blocks.append(Section("work from outside the function", (outside,), id="profile-outside"))
    if row.ops:
        blocks.append(Section("top HLO ops", (top_ops(row),), f"module {row.module}", id="profile-ops"))
        blocks += [s for s in (communication_split(row.ops),) if s is not None]  # sharded programs only
    blocks.append(Section("where a call's time goes", reconciliation(row), id="profile-reconcile"))
    blocks.extend(Note(w, "warning", "warning") for w in row.warnings)
    blocks += [n for n in (peak_note(row),) if n is not None]
    blocks.append(Note(f"fusions: {row.split_rule}; FLOPs and bytes are estimated from the HLO shapes; memory "
                       "at the peak, by line: jitscope memory", "muted"))
    title = f"{row.target}({row.call})" + (f" [{row.label}]" if row.label else "")
    return Section(title, tuple(blocks), level=1, id="profile")


def profile_document(report: ProfileReport, failures: bool = True) -> Document:
    """The report as a view; ``failures=False`` leaves failed calls out (the terminal says them on stderr)."""
    blocks: list[Block] = [row_section(row) for row in report.rows]
    unknown = sorted({row.device_kind for row in report.rows if row.peak is None and row.device_kind})
    blocks.extend(Note(f"device peak unknown for {kind}: no share of peak FLOP/s or bandwidth shown", "muted")
                  for kind in unknown)
    if failures:
        blocks.extend(Note(f.error + (f" ({f.hint})" if f.hint else ""), "error", "error")
                      for f in report.failures)
    env = report.environment
    meta = tuple((k, str(v)) for k, v in env.items()) + (
        ("calls profiled", str(report.settings.calls)), ("timing budget", fmt_duration(report.settings.budget)))
    return Document("jitscope profile", "profile", tuple(blocks),
                    subtitle="where the compiled program's device time goes, by source line", meta=meta)
