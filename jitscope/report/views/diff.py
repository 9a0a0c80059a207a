"""``jitscope diff`` records as a view model: per call, a one-line verdict, the figures side by side, the
lines of the user's code that changed (with the equations only on each side), primitive counts, the
optimised HLO's instructions and collectives added or removed, the bench verdict and the CI gates.

Every back end renders it; Markdown is sized for a pull-request comment (``limit`` rows per table, the
rest counted), HTML adds the two sides' jaxpr and HLO side by side, folded.
"""

from __future__ import annotations

from collections.abc import Sequence

from jitscope.comparison.gate import fmt_metric
from jitscope.model.diff import (
    CallDiff,
    CompileCounts,
    DiffReport,
    GateResult,
    KeyComparison,
    LineChange,
    MemoryComparison,
    Metric,
    SideInfo,
)
from jitscope.model.trace import TraceReport
from jitscope.report.views.document import (
    Block,
    CodeListing,
    Column,
    Document,
    Note,
    Panels,
    Paragraph,
    Pieces,
    Section,
    Table,
    pieces,
)
from jitscope.units import fmt_bytes, fmt_change, fmt_count, plural

_KIND_STYLE = {"added": "jitscope.good", "removed": "jitscope.bad", "changed": "jitscope.warn",
               "moved": "jitscope.muted"}


def verdict(call: CallDiff) -> Pieces:
    """``program changed: 1 line added, +1 dot_general, HLO +1/-0, FLOPs +48.5%`` or ``no change ...``."""
    if call.failed:
        side = call.old if call.old.failure else call.new
        where = f" at {side.failure_where}" if side.failure_where else ""
        return (("failed on the ", "jitscope.bad"), (f"{side.label} side{where}: {side.failure}", ""))
    if not call.program_changed:
        edited = f" ({plural(call.edited_same, 'line')} edited without changing it)" if call.edited_same else ""
        return (("no change to the compiled program", "jitscope.good"), (edited, ""))
    parts: list[str] = []
    kinds = [c.kind for c in call.changes]
    for kind in ("added", "removed", "changed", "moved"):
        if kinds.count(kind):
            parts.append(f"{plural(kinds.count(kind), 'line')} {kind}")
    if call.primitives:
        parts.append(", ".join(f"{d.new - d.old:+d} {d.name}" for d in call.primitives[:3])
                     + (" ..." if len(call.primitives) > 3 else ""))
    added = sum(h.count for h in call.hlo if h.kind == "added")
    removed = sum(h.count for h in call.hlo if h.kind == "removed")
    if added or removed:
        parts.append(f"HLO +{added}/-{removed} instructions")
    new_coll = sum(c.count for c in call.collectives if c.kind == "added")
    if new_coll:
        parts.append(f"+{plural(new_coll, 'collective')}")
    for metric in call.metrics:
        if metric.name in ("flops", "bytes", "peak") and metric.change:
            parts.append(f"{metric.label.split(' (')[0]} {fmt_change(metric.change)}")
    if call.keys is not None and (call.keys.old_hit_of == 0) != (call.keys.new_hit_of == 0):
        parts.append("compiles on the new side only" if call.keys.new_hit_of == 0 else "compiles on the old side only")
    return (("program changed", "jitscope.warn"), (": " + "; ".join(parts) if parts else "", ""))


def metrics_table(metrics: Sequence[Metric]) -> Table:
    rows = []
    for m in metrics:
        change = fmt_change(m.change) if m.change is not None else ("new" if m.old is None else
                                                                     "gone" if m.new is None else "from 0")
        if m.old == m.new:
            change = "same"
        style = "jitscope.muted" if m.noisy or change == "same" else ""
        rows.append((m.label, fmt_metric(m, m.old), fmt_metric(m, m.new), pieces(change, style)))
    return Table((Column("figure"), Column("old", "right"), Column("new", "right"), Column("change", "right")),
                 tuple(rows))


def _eqns_cell(change: LineChange) -> str:
    if change.kind == "moved":
        return "same equations"
    parts = [f"- {e}" for e in change.removed_eqns] + [f"+ {e}" for e in change.added_eqns]
    return "\n".join(parts)


def lines_table(changes: Sequence[LineChange], limit: int | None) -> Table:
    shown = changes if limit is None else changes[:limit]
    rows: list[tuple[str | Pieces, ...]] = []
    for c in shown:
        code = c.new_source or c.old_source
        if c.kind == "changed" and c.old_source and c.new_source and c.old_source != c.new_source:
            code = f"{c.old_source}  ->  {c.new_source}"
        context = f" (in {c.context})" if c.context else ""
        rows.append((pieces(c.kind, _KIND_STYLE[c.kind]), c.old_where, c.new_where, code + context, _eqns_cell(c)))
    if limit is not None and len(changes) > limit:
        rows.append(("", "", "", f"... and {len(changes) - limit} more", ""))
    return Table((Column("change"), Column("old"), Column("new"), Column("code"), Column("equations")), tuple(rows))


def hlo_table(call: CallDiff, limit: int | None) -> Table:
    items = call.hlo if limit is None else call.hlo[:limit]
    rows: list[tuple[str | Pieces, ...]] = [
        (pieces(h.kind, _KIND_STYLE[h.kind]), str(h.count), h.opcode, h.shape, h.fused or h.primitive,
         h.where, "yes" if h.in_loop else "") for h in items]
    if limit is not None and len(call.hlo) > limit:
        rows.append(("", "", f"... and {len(call.hlo) - limit} more", "", "", "", ""))
    return Table((Column("change"), Column("n", "right"), Column("op"), Column("shape"), Column("does"),
                  Column("line"), Column("in loop")), tuple(rows))


def collectives_table(call: CallDiff) -> Table:
    rows = tuple((pieces(c.kind, _KIND_STYLE[c.kind]), str(c.count), c.collective,
                  f"{c.dtype}[{','.join(map(str, c.shape))}]", fmt_bytes(c.send_bytes), c.where,
                  "yes" if c.in_loop else "") for c in call.collectives)
    return Table((Column("change"), Column("n", "right"), Column("collective"), Column("shape per device"),
                  Column("sent per device", "right"), Column("line"), Column("in loop")), rows)


def _signed_bytes(n: int) -> str:
    return ("+" if n > 0 else "-" if n < 0 else "") + fmt_bytes(abs(n)) if n else "0 B"


def memory_section(memory: MemoryComparison, limit: int | None) -> Section:
    """``--memory``: the exact peaks, then bytes live at the peak by line, largest change first."""
    change = f" ({fmt_change(memory.change)})" if memory.change else ""
    at = [f"{side} at {where}" for side, where in (("old", memory.old_peak_at), ("new", memory.new_peak_at)) if where]
    head = (f"peak (XLA's buffer assignment, per device): {fmt_bytes(memory.old_peak)} -> {fmt_bytes(memory.new_peak)}"
            f"{change}; arguments {fmt_bytes(memory.old_arguments)} -> {fmt_bytes(memory.new_arguments)}; reserved "
            f"{fmt_bytes(memory.old_reserved)} -> {fmt_bytes(memory.new_reserved)}" + (f" ({', '.join(at)})" if at else ""))
    blocks: list[Block] = [Paragraph(pieces(head), wrap=True)]
    if memory.old_residual is not None and memory.new_residual is not None and (memory.old_residual or
                                                                              memory.new_residual):
        blocks.append(Paragraph(pieces(f"saved for the backward pass, live at the peak: {fmt_bytes(memory.old_residual)}"
                                       f" -> {fmt_bytes(memory.new_residual)}"), wrap=True))
    if memory.lines:
        shown = memory.lines if limit is None else memory.lines[:limit]
        residuals = any(r.old_residual or r.new_residual for r in memory.lines)
        rows: list[tuple[str | Pieces, ...]] = []
        for r in shown:
            style = "jitscope.bad" if r.change > 0 else "jitscope.good"
            rows.append((r.old_where or "(none)", r.new_where or "(none)", r.source, fmt_bytes(r.old_bytes),
                         fmt_bytes(r.new_bytes), pieces(_signed_bytes(r.change), style),
                         *((f"{fmt_bytes(r.old_residual)} -> {fmt_bytes(r.new_residual)}"
                            if r.old_residual or r.new_residual else "",) if residuals else ()),
                         ", ".join(r.primitives[:3])))
        if limit is not None and len(memory.lines) > limit:
            rows.append(("", "", f"... and {len(memory.lines) - limit} more", "", "", "",
                         *(("",) if residuals else ()), ""))
        columns = (Column("old"), Column("new"), Column("code"), Column("old bytes", "right"),
                   Column("new bytes", "right"), Column("change", "right"),
                   *((Column("saved for backward"),) if residuals else ()), Column("made by"))
        blocks.append(Table(columns, tuple(rows)))
    blocks += [Note(n, "info") for n in memory.notes]
    note = (f"{plural(memory.same, 'other line')} unchanged" if memory.same else "") if memory.lines else (
        f"no line's bytes at the peak changed ({plural(memory.same, 'line')} compared)")
    return Section("memory at the peak, by line (--memory)", tuple(blocks), note=note)


def _hit(hit_of: int) -> str:
    return "compiles" if hit_of == 0 else f"reuses call {hit_of}'s compile"


def keys_section(keys: KeyComparison) -> Section:
    """The compile-cache keys of both sides: arguments handled differently, and whether the call compiles."""
    blocks: list[Block] = []
    if keys.arguments:
        rows = tuple((a.argument, a.old, a.new, a.effect) for a in keys.arguments)
        blocks.append(Table((Column("argument"), Column("old"), Column("new"), Column("effect")), rows))
    statics = [f"{side}: {', '.join(names) or 'none'}" for side, names in (("old", keys.old_statics),
                                                                         ("new", keys.new_statics))]
    donated = [f"{side}: {', '.join(names) or 'none'}" for side, names in (("old", keys.old_donated),
                                                                         ("new", keys.new_donated))]
    blocks.append(Paragraph(pieces(f"static arguments ({'; '.join(statics)}); donated ({'; '.join(donated)})",
                                   "jitscope.muted"), wrap=True))
    for side, hit, cause in (("old", keys.old_hit_of, keys.old_cause), ("new", keys.new_hit_of, keys.new_cause)):
        why = f": {'; '.join(str(d) for d in cause)}" if hit == 0 and cause else ""
        blocks.append(Paragraph(pieces(f"{side} side: this call {_hit(hit)}{why}"), wrap=True))
    other = [d for d in keys.diffs if not any(d.component.startswith(a.argument) for a in keys.arguments)]
    if other:
        blocks.append(Table((Column("key component"), Column("old"), Column("new")),
                            tuple((d.component, d.before, d.after) for d in other)))
    return Section("compile cache (recompilation)", tuple(blocks))


def compiles_note(counts: CompileCounts) -> Note:
    """``recompilation: 2 calls compile 1 time on the old side, 2 on the new: n is static now ...``."""
    extra = counts.new - counts.old
    what = "" if not extra else f" ({'+' if extra > 0 else ''}{extra} compile{'s' if abs(extra) != 1 else ''})"
    why = "; ".join(f"{a.argument} {a.old} -> {a.new}: {a.effect}" for a in counts.arguments)
    text = (f"recompilation: the {plural(counts.calls, 'call')} compared compile {plural(counts.old, 'time')} on the "
            f"old side and {plural(counts.new, 'time')} on the new{what}" + (f"; {why}" if why else ""))
    return Note(text, "warning" if extra > 0 else "info", wrap=True)


def call_section(call: CallDiff, *, limit: int | None, page: str, sides: tuple[TraceReport, TraceReport] | None,
                 index: int) -> Section:
    blocks: list[Block] = [Paragraph(verdict(call), wrap=True)]
    blocks += [Paragraph(pieces(f"{name}: {_side(side)}", "jitscope.muted")) for name, side in (("old", call.old),
                                                                                                ("new", call.new))]
    if call.metrics:
        blocks.append(Section("figures", (metrics_table(call.metrics),)))
    if call.changes:
        note = f"{plural(call.unchanged, 'line')} unchanged" + (
            f", {call.edited_same} edited without changing the program" if call.edited_same else "")
        blocks.append(Section("lines of your code", (lines_table(call.changes, limit),), note=note))
    elif not call.failed and call.unchanged:
        blocks.append(Paragraph(pieces(f"lines of your code: {plural(call.unchanged, 'line')}, none changed"
                                       + (f" ({call.edited_same} edited without changing the program)"
                                          if call.edited_same else ""), "jitscope.muted")))
    if call.primitives:
        rows = tuple((d.name, fmt_count(d.old), fmt_count(d.new), f"{d.new - d.old:+d}") for d in call.primitives)
        blocks.append(Section("primitives", (Table((Column("primitive"), Column("old", "right"),
                                                    Column("new", "right"), Column("change", "right")), rows),)))
    if call.hlo or call.fusion_note:
        hlo_blocks: list[Block] = [hlo_table(call, limit)] if call.hlo else []
        if call.fusion_note:
            hlo_blocks.append(Note(call.fusion_note, "info"))
        blocks.append(Section("optimised HLO", tuple(hlo_blocks),
                              note=f"{call.hlo_matched} instructions matched on both sides"))
    if call.collectives:
        blocks.append(Section("collectives", (collectives_table(call),)))
    if call.memory is not None:
        blocks.append(memory_section(call.memory, limit))
    if call.keys is not None:
        blocks.append(keys_section(call.keys))
    if call.compile_time is not None and (call.compile_time.lines or call.compile_time.phases):
        ct = call.compile_time
        ct_blocks: list[Block] = []
        if ct.lines:
            ct_blocks.append(Table((Column("line (HLO instructions)"), Column("old", "right"), Column("new", "right"),
                                    Column("change", "right")),
                                   tuple((m.label, fmt_count(int(m.old or 0)), fmt_count(int(m.new or 0)),
                                          f"{int((m.new or 0) - (m.old or 0)):+d}") for m in ct.lines)))
        if ct.line_seconds:
            ct_blocks.append(metrics_table(ct.line_seconds))
        if ct.phases:
            ct_blocks.append(metrics_table(ct.phases))
        blocks.append(Section("compile time", tuple(ct_blocks), note="by line of your code and by XLA phase"))
    if call.bench is not None:
        b = call.bench
        text = (f"cached call: old {fmt_metric(_SECONDS, b.old.median)}, new {fmt_metric(_SECONDS, b.new.median)}; "
                f"new/old {b.ratio:.3f} (the rounds of each side spread {b.noise:.1%}; {b.rounds} alternating "
                "rounds): ")
        style = {"faster": "jitscope.good", "slower": "jitscope.bad", "same": "jitscope.muted"}[b.verdict]
        word = {"faster": "faster", "slower": "slower", "same": "no difference beyond the noise"}[b.verdict]
        blocks.append(Section("bench", (Paragraph(((text, ""), (word, style)), wrap=True),)))
    blocks += [Note(n, "info") for n in call.notes]
    if sides is not None:
        blocks += _ir_panels(sides, index, page)
    title = f"{call.target}({call.call})"
    return Section(title, tuple(blocks), level=1, id=page)


def _side(side: SideInfo) -> str:
    what = f"{side.target}({side.call})"
    return what if side.label == side.target else f"{what}  ({side.label})"


_SECONDS = Metric("time", "time", None, None, "seconds")


def _ir_panels(sides: tuple[TraceReport, TraceReport], index: int, page: str) -> list[Block]:
    """The two sides' jaxpr and optimised HLO side by side (HTML), folded."""
    from jitscope.report.views.jaxpr import render_jaxpr_text

    old, new = (s.traces[index] if index < len(s.traces) else None for s in sides)
    out: list[Block] = []
    for name, language in (("jaxpr", "jaxpr"), ("optimised HLO", "hlo")):
        texts = []
        for record in (old, new):
            if record is None:
                texts.append("")
            elif language == "jaxpr":
                texts.append(render_jaxpr_text(record.jaxpr, None, header=False) if record.jaxpr else "")
            else:
                texts.append(record.stages.hlo or "" if record.stages else "")
        if not any(texts):
            continue
        panels = Panels(tuple(Section(side, (CodeListing((), language, raw=text, id=f"{page}-{language}-{side}"),))
                              for side, text in zip(("old", "new"), texts, strict=True)))
        out.append(Section(f"{name}, old and new", (panels,), collapsed=True))
    return out


def gates_section(gates: Sequence[GateResult]) -> Section:
    rows = tuple((g.rule, pieces("crossed" if g.crossed else "ok", "jitscope.bad" if g.crossed else "jitscope.good"),
                  g.message if g.crossed else "") for g in gates)
    return Section("CI gates (--fail-on)", (Table((Column("threshold"), Column("result"), Column("detail")), rows),))


def diff_document(report: DiffReport, *, limit: int | None = None,
                  sides: tuple[TraceReport, TraceReport] | None = None) -> Document:
    """The report as a document; ``limit`` caps the rows of each table (Markdown for a pull request),
    ``sides`` adds the IR of both sides (HTML)."""
    blocks: list[Block] = [call_section(call, limit=limit, page=f"d{i}", sides=sides, index=i)
                           for i, call in enumerate(report.calls)]
    if report.compiles is not None:
        blocks.insert(0, compiles_note(report.compiles))
    if not report.calls:
        blocks.append(Note("no call of the target was traced on both sides", "warning", "warning"))
    blocks += [Note(n, "info") for n in report.notes]
    if report.gates:
        blocks.append(gates_section(report.gates))
    env = []
    for label, call in (("old", report.calls[0].old if report.calls else None),
                        ("new", report.calls[0].new if report.calls else None)):
        if call is not None and call.environment:
            env.append((label, ", ".join(f"{k} {v}" for k, v in call.environment.items()
                                         if k in ("jax", "backend", "device_count"))))
    return Document(f"jitscope diff: {report.old_label} -> {report.new_label}", "diff", tuple(blocks), meta=tuple(env))
