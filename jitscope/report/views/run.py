"""``jitscope run`` records as a view model: the run in figures, a compile timeline, the functions worst
first, every recompile with its causes, internal compiles and trace-time side effects.

``run_document(record)`` is the report (``--format markdown|html``); ``layout="summary"`` is the exit
summary the terminal prints on stderr (``report/writers/run_live.py``; ``report/writers/run_plain.py`` writes the same text without
rich for the common case). The timeline is a chart as data: one lane per
function, a bar per trace/compile placed at its start (seconds since the program started), its
trace / lower / compile phases end to end, labelled with what changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from jitscope.model.effects import EFFECT_ADVICE
from jitscope.model.run import SYNC_REPEATS, USER, CompileEvent, FunctionSummary, RunRecord
from jitscope.report.views.document import (
    Block,
    Cell,
    Chart,
    Column,
    Document,
    KeyValues,
    Note,
    Paragraph,
    Section,
    Series,
    Span,
    Table,
    pieces,
)
from jitscope.run.causes import SAME_KEY, UNKNOWN, cause_hint, describe_causes, nearest_text
from jitscope.run.summary import (
    compiled_functions,
    compiles_cell,
    internal_compiles,
    recompiled,
    sync_lines,
)
from jitscope.units import fmt_count, fmt_duration, fmt_share, plural

PHASES = ("trace", "lower", "compile")
#: The timeline's lane for every compile that is not one of the user's functions.
INTERNAL_LANE = "internal compiles"
#: Recompiles listed per function; a report of a pathological program stays readable.
MAX_RECOMPILES = 100


def events_of(function: FunctionSummary, events: Sequence[CompileEvent]) -> list[CompileEvent]:
    return [e for e in events if e.function == function.function and e.defined_at == function.defined_at
            and (e.kind == USER) == (function.kind == USER)]


def start_of(event: CompileEvent) -> float:
    """When the event started: it is recorded when it ends, after its phases."""
    return max(event.at_s - event.total_s, 0.0)


def short_causes(event: CompileEvent) -> str:
    """What changed, by component only: ``x: shape, y: shape``."""
    if event.same_key_as:
        return f"same key as {event.same_key_as}"
    if not event.causes:
        return "cause unknown"
    return ", ".join(c.component for c in event.causes)


def _what(event: CompileEvent) -> str:
    where = f" from {event.call_site}" if event.call_site is not None else ""
    if event.number == 1:
        why = event.signature or "first compile"
    elif event.same_key_as:
        why = f"same cache key as compile {event.same_key_as}"
    elif event.causes:
        vs = nearest_text(event)
        why = "; ".join(map(str, event.causes)) + (f" ({vs})" if vs else "")
    else:
        why = UNKNOWN
    return f"{'compile' if event.compiled else 'trace'} {event.number}{where}: {why}"


def timeline_chart(record: RunRecord) -> Chart:
    mine = [f for f in record.functions if f.kind == USER]
    lanes = [f.function for f in mine]
    spans: list[Span] = []
    for lane, function in enumerate(mine):
        events = events_of(function, record.events)
        again = {id(e) for e in recompiled(events)}
        for event in events:
            label = (f"{'compile' if event.compiled else 'trace'} {event.number}"
                     + (f": {short_causes(event)}" if id(event) in again else ""))
            spans.append(Span(lane, start_of(event), (event.trace_s, event.lower_s, event.compile_s), label,
                              _what(event), mark=id(event) in again))
    internal = [e for e in record.events if e.kind != USER]
    if internal:
        lanes.append(INTERNAL_LANE)
        spans += [Span(len(lanes) - 1, start_of(e), (e.trace_s, e.lower_s, e.compile_s),
                       title=f"{e.function} ({e.kind}): {_what(e)}", quiet=True) for e in internal]
    return Chart("timeline", "compile timeline (seconds since the program started)", tuple(Series(p, ()) for p in PHASES), categories=tuple(lanes),
                 x_label="seconds", y_label="function", x_unit="seconds", spans=tuple(spans),
                 x_range=(0.0, max(record.wall_s, 0.0)),
                 caption="A bar per trace and compile at the time it started, its phases end to end; outlined: "
                         "a recompile, labelled with what changed. Hover a bar for the whole story.")


def headline(record: RunRecord) -> str:
    return (f"{record.program}{record.process_label} {record.outcome} after {fmt_duration(record.wall_s)}; "
            f"{compiled_functions(record.functions)}, {fmt_duration(record.compile_s)} tracing and compiling "
            f"= {fmt_share(record.compile_s, record.wall_s)} of wall time")


def figures(record: RunRecord) -> KeyValues:
    mine = [f for f in record.functions if f.kind == USER]
    internal = [f for f in record.functions if f.kind != USER]
    rows = [("program", " ".join([record.program, *record.argv])), ("outcome", record.outcome),
            ("exit code", str(record.exit_code)), ("wall time", fmt_duration(record.wall_s)),
            ("jitted functions", fmt_count(sum(1 for f in mine if f.compiles))),
            ("compiles", fmt_count(sum(f.compiles for f in mine))),
            ("recompiles", fmt_count(sum(f.recompiles for f in mine))),
            ("tracing and compiling", fmt_duration(record.compile_s)),
            ("share of wall time", fmt_share(record.compile_s, record.wall_s))]
    if internal:
        count, seconds = sum(f.compiles for f in internal), sum(f.total_s for f in internal)
        rows.append(("internal compiles", f"{count:,} in {fmt_duration(seconds)}"))
    return KeyValues(tuple(rows))


def functions_section(functions: Sequence[FunctionSummary], wall_s: float) -> Section:
    rows: list[tuple[Cell, ...]] = []
    for f in functions:
        rows.append((f.function, str(f.defined_at or "?"),
                     pieces(compiles_cell(f), "jitscope.warn" if f.compiles > 1 else "jitscope.number"),
                     fmt_duration(f.trace_s), fmt_duration(f.lower_s), fmt_duration(f.compile_s),
                     fmt_duration(f.total_s), fmt_share(f.total_s, wall_s)))
    columns = (Column("function"), Column("defined at", style="jitscope.path"), Column("compiles", "right"),
               *(Column(p, "right") for p in PHASES), Column("total", "right"), Column("share", "right"))
    return Section("functions", (Table(columns, tuple(rows)),), "worst first; share: of the wall time",
                   id="functions")


def _cause_rows(event: CompileEvent) -> list[tuple[Cell, ...]]:
    site = str(event.call_site) if event.call_site is not None else ""
    head = (str(event.number), fmt_duration(start_of(event)), site)
    if event.same_key_as:
        changes = [(pieces("nothing (same cache key)", "jitscope.warn"), "", "", str(event.same_key_as))]
    elif not event.causes:
        changes = [(pieces("unknown", "jitscope.muted"), "", "", "")]
    else:
        vs = ", ".join(map(str, event.nearest)) + (" (equally near)" if len(event.nearest) > 1 else "")
        changes = [(pieces(c.component, "jitscope.warn"), c.before, c.after, vs if i == 0 else "")
                   for i, c in enumerate(event.causes)]
    return [(*(head if i == 0 else ("", "", "")), *change) for i, change in enumerate(changes)]


def recompiles_section(function: FunctionSummary, events: Sequence[CompileEvent], ident: str) -> Section:
    again = recompiled(events)
    first = next(e for e in events if e.compiled)
    blocks: list[Block] = []
    where = f" from {first.call_site}" if first.call_site is not None else ""
    blocks.append(Paragraph((("compile 1", "jitscope.title"), (f"{where} at {fmt_duration(start_of(first))}: ", ""),
                             (first.signature or "(arguments not seen)", "jitscope.muted"))))
    rows = [row for event in again[:MAX_RECOMPILES] for row in _cause_rows(event)]
    columns = (Column("compile", "right"), Column("at", "right"), Column("called from", style="jitscope.path"),
               Column("what changed"), Column("before"), Column("after"), Column("vs compile"))
    blocks.append(Table(columns, tuple(rows)))
    if len(again) > MAX_RECOMPILES:
        blocks.append(Note(f"... and {len(again) - MAX_RECOMPILES} more recompiles (all causes: "
                           + ", ".join(f"{name} x{n}" for name, n in function.causes) + ")", "muted"))
    hints = dict.fromkeys((c.component, hint) for e in again for c in e.causes if (hint := cause_hint(e, c)))
    blocks += [Note(f"{component}: {hint}", "info", "hint") for component, hint in hints]
    if any(e.same_key_as for e in again):
        blocks.append(Note(f"same cache key as an earlier compile: {SAME_KEY}", "info", "hint"))
    blocks += [Note(f"{'compile' if e.compiled else 'trace'} {e.number}: tracing raised {e.error}", "error", "error")
               for e in events if e.error]
    via = f", via {first.via}" if first.via else ""
    return Section(f"{function.function}: {plural(len(again), 'recompile')}", tuple(blocks),
                   f"defined at {function.defined_at or '?'}{via}", id=ident)


def internal_section(functions: Sequence[FunctionSummary]) -> Section:
    rows = tuple((f.function, f.kind, str(f.events), str(f.compiles), fmt_duration(f.total_s)) for f in functions)
    table = Table((Column("function"), Column("kind"), Column("traces", "right"), Column("compiles", "right"),
                   Column("time", "right")), rows)
    return Section("internal compiles", (table,), "JAX's eager op-by-op execution, libraries' own jits",
                   collapsed=True, id="internal")


def effects_section(events: Sequence[CompileEvent]) -> Section | None:
    seen: dict[tuple[str, str, str, str], int] = {}
    for event in events:
        for effect in event.effects:
            key = (event.function, effect.detail, str(effect.location), EFFECT_ADVICE[effect.kind])
            seen[key] = seen.get(key, 0) + 1
    if not seen:
        return None
    rows = tuple((function, pieces(detail, "jitscope.warn"), where, str(n), advice)
                 for (function, detail, where, advice), n in seen.items())
    table = Table((Column("traced function"), Column("effect"), Column("at", style="jitscope.path"),
                   Column("traces", "right"), Column("instead")), rows)
    return Section("trace-time side effects", (table,), "they run once per trace, never in the compiled program",
                   id="effects")


def syncs_section(record: RunRecord) -> Section | None:
    repeated = sorted((s for s in record.syncs if s.count >= SYNC_REPEATS and s.overlap_s >= 0.01 * record.wall_s),
                      key=lambda s: -s.overlap_s)
    if not repeated:
        return None
    rows = tuple((pieces(str(s.location), "jitscope.path"), str(s.count), fmt_duration(s.wait_s),
                  fmt_duration(s.overlap_s), s.platform) for s in repeated)
    table = Table((Column("line"), Column("copies", "right"), Column("waited", "right"),
                   Column("could overlap", "right"), Column("device")), rows)
    return Section("host-device syncs", (table,), "lines that copied a value to the host again and again "
                   "(float(loss), np.asarray(x), print(x)), each copy waiting for the device", id="syncs")


#: Recompile causes the exit summary lists per function before "... and N more".
SUMMARY_CAUSES = 4


def _summary_causes(functions: Sequence[FunctionSummary], events: Sequence[CompileEvent]) -> list[Block]:
    lines: list[Block] = []
    for f in functions:
        again = recompiled(events_of(f, events))
        if not again:
            continue
        lines.append(Paragraph(pieces(f"{f.function}: {len(again)} recompile{'s' if len(again) > 1 else ''}, because:",
                                      "jitscope.title")))
        for event in again[:SUMMARY_CAUSES]:
            site = ((str(event.call_site), "jitscope.path"), (" ", "")) if event.call_site is not None else ()
            lines.append(Paragraph(((f"  {event.number}: ", ""), *site, (describe_causes(event), ""))))
        if len(again) > SUMMARY_CAUSES:
            counts = ", ".join(f"{name} x{n}" for name, n in f.causes[:4])
            lines.append(Paragraph(pieces(f"  ... and {len(again) - SUMMARY_CAUSES} more (all causes: {counts})",
                                          "jitscope.muted")))
    return lines


def summary_section(record: RunRecord) -> Section:
    """The exit summary, one group: the headline, the functions table, each recompile's causes, internal
    compiles, trace-time side effects and notes (the report's sections, each in a line or two)."""
    mine = [f for f in record.functions if f.kind == USER]
    blocks: list[Block] = [Paragraph((("jitscope run: ", "jitscope.title"), (headline(record), "")))]
    if mine:
        rows = tuple((f.function, pieces(str(f.defined_at or "?"), "jitscope.path"),
                      pieces(compiles_cell(f), "jitscope.warn" if f.compiles > 1 else "jitscope.number"),
                      fmt_duration(f.trace_s), fmt_duration(f.lower_s), fmt_duration(f.compile_s),
                      fmt_share(f.total_s, record.wall_s)) for f in mine)
        blocks.append(Table((Column("function"), Column("defined at"), Column("compiles", "right"),
                             *(Column(p, "right") for p in PHASES), Column("share", "right")), rows))
        blocks += _summary_causes(mine, record.events)
    line = internal_compiles(record.functions)
    if line is not None:
        blocks.append(Paragraph(pieces(line, "jitscope.muted")))
    seen: dict[str, int] = {}
    for effect in (effect for event in record.events for effect in event.effects):
        seen[effect.describe()] = seen.get(effect.describe(), 0) + 1
    if seen:
        blocks.append(Paragraph(pieces("trace-time side effects (they run once per trace, never in the compiled "
                                       "program):", "jitscope.warn")))
        blocks += [Paragraph(pieces(f"  {line}" + (f" [{n} traces]" if n > 1 else ""))) for line, n in seen.items()]
    blocks += [Paragraph(pieces(line, "jitscope.warn")) for line in sync_lines(record.syncs, record.wall_s)]
    blocks += [Paragraph(pieces(f"note: {note}", "jitscope.muted")) for note in record.notes]
    if not record.events:
        blocks.append(Paragraph(pieces("no JAX traces or compiles were seen", "jitscope.muted")))
    return Section("", tuple(blocks))


def run_document(record: RunRecord, layout: Literal["report", "summary"] = "report") -> Document:
    """The whole run as a report, or (``summary``) as the terminal's exit summary."""
    if layout == "summary":
        return Document("", "run", (summary_section(record),))
    mine = [f for f in record.functions if f.kind == USER]
    internal = [f for f in record.functions if f.kind != USER]
    blocks: list[Block] = [figures(record)]
    blocks += [Note(failure, "error", "gate failed") for failure in record.gate_failures]
    blocks += [Note(note, "muted", "note") for note in record.notes]
    if record.events:
        blocks.append(timeline_chart(record))
    else:
        blocks.append(Note("no JAX traces or compiles were seen", "muted"))
    if mine:
        blocks.append(functions_section(mine, record.wall_s))
    for i, function in enumerate(mine):
        events = events_of(function, record.events)
        if recompiled(events):
            blocks.append(recompiles_section(function, events, f"recompiles-{i + 1}"))
    effects = effects_section(record.events)
    if effects is not None:
        blocks.append(effects)
    syncs = syncs_section(record)
    if syncs is not None:
        blocks.append(syncs)
    if internal:
        blocks.append(internal_section(internal))
    meta = (("jax", record.jax_version or "?"), ("run schema", record.schema_version))
    return Document(f"jitscope run: {record.program}", "run", tuple(blocks), subtitle=headline(record), meta=meta)
