"""``jitscope memory`` records as a view model: the peak and what is live there, bytes by source line (a heat
column over the source, as ``profile`` shows time), totals against ``memory_analysis()``, residuals of the
backward pass, donation candidates.
"""

from __future__ import annotations

import re

from jitscope.model.memory import (
    ARGUMENT,
    BufferRecord,
    DonationCandidate,
    LineMemory,
    MemoryReport,
    MemoryRow,
)
from jitscope.report.views.document import (
    Block,
    CodeListing,
    Column,
    Document,
    Note,
    Paragraph,
    Section,
    Table,
    pieces,
)
from jitscope.report.views.profile import heat_listing, short_location
from jitscope.units import NA, fmt_bytes, fmt_count, fmt_fraction

#: Rows of the top-lines table; buffers listed in text (JSON, Markdown and HTML list every one).
TOP_LINES = 10
TEXT_BUFFERS = 25


def _where(row: MemoryRow, buffer: BufferRecord) -> str:
    if buffer.kind == ARGUMENT:
        return f"argument {buffer.argument}" + (" (donated)" if buffer.donated else "")
    if buffer.location is None:
        return "no source line"
    text = short_location(buffer.location, row.function.file)
    if buffer.helper is not None:
        text += f" → {short_location(buffer.helper)}"
    return text + ("" if buffer.in_function else f" ({buffer.location.function or '?'})")


def buffers_table(row: MemoryRow, limit: int | None) -> tuple[Block, ...]:
    buffers = row.peak.buffers if limit is None else row.peak.buffers[:limit]
    table = Table((Column("bytes", "right"), Column("shape"), Column("kind"), Column("line"), Column("made by"),
                   Column("primitive")),
                  tuple((fmt_bytes(b.bytes), b.shape, b.kind + (" (residual)" if b.residual else ""), _where(row, b),
                         b.instruction, b.primitive or NA) for b in buffers))
    rest = row.peak.buffers[len(buffers):]
    if not rest:
        return (table,)
    return table, Note(f"{len(rest)} more buffers, {fmt_bytes(sum(b.bytes for b in rest))} together "
                       "(--format json, markdown or html lists every one)", "muted")


def _line_row(row: MemoryRow, line: LineMemory) -> tuple[str, ...]:
    where = short_location(line.location, row.function.file) + (
        "" if line.in_function else f" ({line.location.function or '?'})")
    return (where, fmt_bytes(line.bytes), fmt_fraction(line.share), str(line.buffers),
            fmt_bytes(line.residual_bytes) if line.residual_bytes else "", ", ".join(line.primitives[:4]))


def top_lines(row: MemoryRow) -> Table:
    parts = [("arguments", row.peak.arguments), ("constants", row.peak.constants),
             ("no source line", row.peak.no_source)]
    extra = tuple((name, fmt_bytes(value), fmt_fraction(value / row.peak.bytes if row.peak.bytes else 0.0), "", "", "")
                  for name, value in parts if value)
    return Table((Column("line"), Column("live at peak", "right"), Column("share", "right"),
                  Column("buffers", "right"), Column("residual", "right"), Column("primitives")),
                 tuple(_line_row(row, line) for line in row.lines[:TOP_LINES]) + extra)


def source_listing(row: MemoryRow) -> CodeListing | None:
    """The function's source, each line with the bytes it made that are live at the peak."""
    return heat_listing(row.function, row.last_line, row.lines, lambda line: line.bytes, row.peak.bytes, fmt_bytes,
                        "memory-source")


def totals_table(row: MemoryRow) -> tuple[Block, ...]:
    totals = row.totals
    theirs = totals.analysis

    def cell(name: str) -> str:
        value = theirs.get(name)
        return fmt_bytes(value) if value is not None else NA

    rows = (("arguments", fmt_bytes(totals.arguments), cell("arguments")),
            ("outputs", fmt_bytes(totals.outputs), cell("outputs")),
            ("  of which in donated arguments' buffers", fmt_bytes(totals.aliased), cell("aliased")),
            ("temporaries", fmt_bytes(totals.temporaries), cell("temporaries")),
            ("constants in the program", fmt_bytes(totals.constants), ""),
            ("generated code", "", cell("generated_code")),
            ("needed on the device", fmt_bytes(totals.reserved), _needed(theirs)))
    table = Table((Column(""), Column("buffer assignment", "right"), Column("memory_analysis()", "right")), rows)
    if not theirs:
        return table, Note("compiled.memory_analysis() is not available on this backend", "muted")
    if totals.reconciles:
        return table, Note("needed on the device: arguments + outputs − outputs in donated arguments' buffers + "
                           "temporaries; the buffer assignment agrees with compiled.memory_analysis()", "good",
                           wrap=True)
    return (table, *(Note(d, "warning", "warning") for d in totals.differences))


def _needed(theirs: dict[str, int | None]) -> str:
    parts = [theirs.get(k) for k in ("arguments", "outputs", "temporaries")]
    if any(p is None for p in parts):
        return NA
    return fmt_bytes(sum(p or 0 for p in parts) - (theirs.get("aliased") or 0))


def residuals_section(row: MemoryRow) -> Section | None:
    if not row.residuals:
        return None
    table = Table((Column("line"), Column("saved for backward", "right"), Column("live at peak", "right"),
                   Column("primitives"), Column("to recompute them instead")),
                  tuple((short_location(r.location, row.function.file), fmt_bytes(r.bytes), fmt_bytes(r.at_peak),
                         ", ".join(r.primitives[:3]), f"jax.checkpoint, policy={r.policy}"
                         + (" (recomputes the matmul too)" if r.policy == "nothing_saveable" else "")) for r in row.residuals))
    blocks: list[Block] = [table, Note(
        "estimate: jax.checkpoint around the code of a line recomputes its residuals in the backward pass, freeing "
        "up to their bytes live at the peak (the inputs needed to recompute them stay live)", "muted", wrap=True)]
    if row.remat:
        blocks.append(Table((Column("measured with --try-remat"), Column("peak", "right"),
                             Column("needed on the device", "right"), Column("change", "right")),
                            tuple((f"jax.checkpoint(policy={t.policy})", fmt_bytes(t.peak) if not t.error else NA,
                                   fmt_bytes(t.reserved) if not t.error else NA,
                                   _change(t.reserved, row.totals.reserved) if not t.error else t.error)
                                  for t in row.remat)))
    return Section("saved for the backward pass (residuals), by the line that made them", tuple(blocks),
                   id="memory-residuals")


def _change(new: int, old: int) -> str:
    return f"{new - old:+,} B ({(new - old) / old:+.0%})" if old else NA


#: Up to this many candidates are listed one by one; more (a model's parameters) are grouped by argument.
DONATIONS_LISTED = 8


def _donation_rows(donations: tuple[DonationCandidate, ...]) -> tuple[tuple[str, ...], ...]:
    if len(donations) <= DONATIONS_LISTED:
        return tuple((f"{d.argument} (#{d.parameter})", d.shape, d.output, fmt_bytes(d.bytes)) for d in donations)
    groups: dict[str, list[DonationCandidate]] = {}
    for d in donations:
        groups.setdefault(re.split(r"[.\[]", d.argument, maxsplit=1)[0] or d.argument, []).append(d)
    rows = []
    for name, members in groups.items():
        if len(members) == 1:
            d = members[0]
            rows.append((f"{d.argument} (#{d.parameter})", d.shape, d.output, fmt_bytes(d.bytes)))
            continue
        first, last = members[0].parameter, members[-1].parameter
        numbers = f"#{first}-#{last}" if last - first + 1 == len(members) else f"{len(members)} parameters"
        rows.append((f"{name} ({numbers})", f"{fmt_count(len(members))} arrays", f"{fmt_count(len(members))} outputs",
                     fmt_bytes(sum(d.bytes for d in members))))
    rows.append(("total", f"{fmt_count(len(donations))} arrays", "", fmt_bytes(sum(d.bytes for d in donations))))
    return tuple(rows)


def donations_section(row: MemoryRow) -> Section | None:
    if not row.donations:
        return None
    table = Table((Column("argument"), Column("shape"), Column("matches"), Column("would save", "right")),
                  _donation_rows(row.donations))
    note = Note("jax.jit(..., donate_argnums=...) lets XLA write an output into the argument's buffer; the caller "
                "must not use the argument after the call", "muted", wrap=True)
    return Section("arguments that could be donated", (table, note), id="memory-donation")


def headline(row: MemoryRow) -> str:
    peak = row.peak
    at = f"{peak.instruction}" + (f" ({short_location(peak.location, row.function.file)})" if peak.location else "")
    devices = f", on each of {row.devices} devices" if row.devices > 1 else ""
    return (f"peak {fmt_bytes(peak.bytes)} live at {at}, step {peak.position + 1} of {peak.steps}; the program "
            f"needs {fmt_bytes(row.totals.reserved)} on the device{devices} ({row.backend})")


def row_section(row: MemoryRow, buffer_limit: int | None) -> Section:
    blocks: list[Block] = [Paragraph(pieces(headline(row)), wrap=True)]
    if row.lines or row.peak.arguments:
        blocks.append(Section("live at the peak, by source line", (top_lines(row),), id="memory-lines"))
    listing = source_listing(row)
    if listing is not None:
        blocks.append(Section("source", (listing,), "heat: bytes live at the peak that each line made", gap=True,
                              id="memory-listing"))
    blocks.append(Section("buffers live at the peak, largest first", buffers_table(row, buffer_limit),
                          id="memory-buffers"))
    blocks += [s for s in (residuals_section(row), donations_section(row)) if s is not None]
    blocks.append(Section("totals", totals_table(row), f"module {row.module}", id="memory-totals"))
    blocks.extend(Note(w, "warning", "warning") for w in row.warnings if w not in row.totals.differences)
    title = f"{row.target}({row.call})" + (f" [{row.label}]" if row.label else "")
    return Section(title, tuple(blocks), level=1, id="memory")


def memory_document(report: MemoryReport, fmt: str = "text", failures: bool = True) -> Document:
    """The report as a view; ``failures=False`` leaves failed calls out (the terminal says them on stderr)."""
    limit = TEXT_BUFFERS if fmt == "text" else None
    blocks: list[Block] = [row_section(row, limit) for row in report.rows]
    blocks.extend(Note(line, "error", "over") for line in report.over)
    if failures:
        blocks.extend(Note(f.error + (f" ({f.hint})" if f.hint else ""), "error", "error") for f in report.failures)
    meta = tuple((k, str(v)) for k, v in report.environment.items())
    if report.settings.fail_over is not None:
        meta += (("--fail-over", fmt_bytes(report.settings.fail_over)),)
    return Document("jitscope memory", "memory", tuple(blocks), subtitle="what holds device memory at the peak, "
                    "by source line (XLA's buffer assignment)", meta=meta)


def summary_line(row: MemoryRow) -> str:
    """One line for a terminal's stderr or a repr."""
    top = row.lines[0] if row.lines else None
    where = f"; top line {short_location(top.location)} ({fmt_bytes(top.bytes)})" if top else ""
    return f"{row.target}: peak {fmt_bytes(row.peak.bytes)}, needs {fmt_bytes(row.totals.reserved)}{where}"

