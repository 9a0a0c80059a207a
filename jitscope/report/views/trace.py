"""``jitscope trace`` records as a view model: one page per traced call.

With ``linked=True`` (HTML, Markdown) the page also holds the user's source and every IR
line carries link keys (``report/views/links.py``), so a viewer can tie an equation to its source
line and to the HLO instructions it became.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from jitscope.model.jaxpr import JaxprRecord, JaxprSummary
from jitscope.model.trace import (
    STAGES,
    ArgumentSummary,
    CostRecord,
    Diagnostic,
    LibraryCall,
    MemoryRecord,
    TraceRecord,
    TraceReport,
)
from jitscope.report.views.document import (
    Block,
    CodeLine,
    CodeListing,
    Column,
    Document,
    KeyValues,
    Note,
    Panels,
    Paragraph,
    Section,
    Table,
    pieces,
)
from jitscope.report.views.jaxpr import JaxprRenderOptions, LocationsMode, jaxpr_layout
from jitscope.report.views.jaxpr_header import layout_jaxpr_header
from jitscope.report.views.links import eqn_key, location_key, stablehlo_key
from jitscope.report.views.source import ir_listing, source_listings
from jitscope.report.views.trace_lines import lines_section
from jitscope.units import fmt_bytes, fmt_duration, fmt_si, plural


def _function(target: str) -> str:
    return target.rsplit(":", 1)[-1]


def header_blocks(record: TraceRecord, *, numbered: bool = False) -> list[Block]:
    call = ((f"call {record.call_index}: " if numbered else "call: ", "jitscope.muted"),
            (f"{_function(record.target)}({record.call})", ""))
    blocks: list[Block] = [Paragraph(call)]
    statics = []
    if record.static_argnums:
        statics.append(f"static_argnums={record.static_argnums}")
    if record.static_argnames:
        statics.append(f"static_argnames={record.static_argnames}")
    if record.donate_argnums:
        statics.append(f"donate_argnums={record.donate_argnums}")
    if statics:
        blocks.append(Paragraph(pieces("jit options: " + ", ".join(statics), "jitscope.muted")))
    blocks += [Note(note, "warning", "warning") for note in record.warnings]
    return blocks


def seen_section(record: TraceRecord) -> Section:
    """The seeds' ``DynamicJaxprTracer`` peek: each argument as the body saw it (an argument with many
    leaves, a model or an optimizer state, as one row that summarises it)."""
    runs = "once" if record.body_runs == 1 else f"{record.body_runs} times"
    watched = " with the effect monitor on" if record.effects is not None else ""
    note = f"body ran {runs} while tracing, {fmt_duration(record.trace_seconds)}{watched}"
    if not record.seen:
        return Section("what the function saw", (Paragraph(pieces("(no arguments)", "jitscope.muted")),), note)
    rows: list[tuple[str | tuple[tuple[str, str], ...], ...]] = []
    whole: dict[str, ArgumentSummary | None] = {a.name: a for a in record.arguments
                                                  if a.traced + a.static > MANY_LEAVES}
    summaries = {a.name: a for a in record.arguments}
    for arg in record.seen:
        name = _argument_of(arg.path, whole) if whole else ""
        if name in whole:
            summary = whole[name]
            if summary is not None:
                rows.append(_argument_row(summary))
                whole[name] = None  # its other leaves are in that row
            continue
        if arg.kind == "traced":
            rows.append((arg.path, pieces("traced", "jaxpr.var"), arg.type_name, pieces(arg.aval, "jaxpr.type")))
            if arg.weak_type:
                rows.append(("", "", "", pieces("weak-typed (from a Python scalar)", "jitscope.muted")))
        else:
            # a whole object passed as one static leaf (an nnx module on flax < 0.11): its summary, not its repr
            whole_object = summaries.get(arg.path)
            value = whole_object.text if whole_object is not None else arg.value_repr
            rows.append((arg.path, pieces("static", "jaxpr.literal"), arg.type_name, value))
    columns = tuple(Column(name) for name in ("argument", "kind", "seen as", "value"))
    return Section("what the function saw", (Table(columns, tuple(rows)),), note, id="seen")


#: An argument with more leaves than this is one row of the arguments table.
MANY_LEAVES = 6


def _argument_of(path: str, names: Collection[str]) -> str:
    """The argument a leaf's path starts with: ``model.blocks[0].attn`` -> ``model``; "" for none."""
    for name in names:
        if path == name or path.startswith((name + ".", name + "[")):
            return name
    return ""


def _argument_row(arg: ArgumentSummary) -> tuple[str | tuple[tuple[str, str], ...], ...]:
    leaves = plural(arg.traced, "traced leaf").replace("leafs", "leaves")
    if arg.static:
        leaves += f", {arg.static} static"
    kind = pieces("traced", "jaxpr.var") if arg.traced else pieces("static", "jaxpr.literal")
    return (arg.name, kind, arg.type_name, pieces(f"{arg.text}: {leaves}", ""))


def printed_section(record: TraceRecord) -> Section | None:
    if not record.printed:
        return None
    return Section("printed while tracing", (Paragraph(pieces(record.printed.rstrip("\n")), preformatted=True),),
                   "runs once per trace, never in the compiled program")


def effects_section(record: TraceRecord) -> Section | None:
    effects = record.effects.effects if record.effects else ()
    if not effects:
        return None
    lines = tuple(Paragraph((("  ! ", "jitscope.warn"), (effect.describe(), "")))
                  for effect in sorted(effects, key=lambda e: (e.location.file, e.location.line)))
    return Section("side effects at trace time", lines, f"{len(effects)} found: they run while tracing only",
                   id="effects")


def diagnostic_section(diag: Diagnostic, *, show_traceback: bool = True) -> Section:
    blocks: list[Block] = [Paragraph((("error: ", "jitscope.bad"), (diag.message, "")))]
    if diag.location is not None:
        blocks.append(Paragraph((("  --> ", "jitscope.muted"), (str(diag.location), "jitscope.path"),
                                 (f" in {diag.location.function}", "jitscope.muted"))))
    if diag.source_line:
        lineno = str(diag.location.line) if diag.location else ""
        blocks.append(Paragraph(((f"  {lineno} | ", "jitscope.muted"), (diag.source_line.strip(), ""))))
    blocks.append(Paragraph((("  fix: ", "jitscope.good"), (diag.fix, ""))))
    if show_traceback and diag.traceback:
        indented = "\n".join("  " + line for line in diag.traceback.splitlines())
        blocks.append(Paragraph(pieces(indented, "jitscope.muted")))
    return Section("tracing failed", tuple(blocks), diag.kind.replace("_", " "), id="failure")


def cost_section(cost: CostRecord | None) -> Section:
    c = cost or CostRecord()
    ai = c.arithmetic_intensity
    rows = (("flops", fmt_si(c.flops)), ("transcendentals", fmt_si(c.transcendentals)),
            ("bytes accessed", fmt_bytes(c.bytes_accessed)),
            ("arithmetic intensity", "n/a" if ai is None else f"{fmt_si(ai)} flop/byte"))
    note = "" if cost is not None else "the backend gives no cost analysis"
    return Section("cost analysis (XLA)", (KeyValues(rows),), note, id="cost")


#: The user's lines listed per library call; the rest are counted.
_LINES_SHOWN = 4


def library_calls_section(record: TraceRecord, page: str = "t1") -> Section | None:
    """The optimised HLO's custom calls (cuBLAS, cuDNN, LAPACK, callbacks ...) named, with the user's lines;
    None when it has none (XLA generated every kernel itself, as it does for most CPU programs)."""
    if not record.library_calls:
        return None
    from jitscope.report.views.profile import short_location

    def lines(call: LibraryCall) -> str:
        shown = ", ".join(short_location(line) for line in call.lines[:_LINES_SHOWN])
        more = len(call.lines) - _LINES_SHOWN
        return (shown + (f" (+{more})" if more > 0 else "")) or "(no line of yours)"

    rows = tuple((str(c.count), c.what, c.target, lines(c)) for c in record.library_calls)
    table = Table((Column("calls", "right"), Column("library call"), Column("custom_call_target"),
                   Column("your lines")), rows)
    total = sum(c.count for c in record.library_calls)
    return Section("library calls", (table,), f"{plural(total, 'custom call')} in the optimised HLO",
                   id=f"{page}-library-calls")


def memory_section(memory: MemoryRecord | None) -> Section:
    m = memory or MemoryRecord()
    rows = tuple((label, fmt_bytes(value)) for label, value in (
        ("arguments", m.argument_bytes),
        ("outputs", m.output_bytes),
        ("aliased (donated)", m.alias_bytes),
        ("temporaries", m.temp_bytes),
        ("generated code", m.generated_code_bytes),
        ("peak (args + outputs + temps - aliased)", m.peak_bytes),
    ))
    note = "" if memory is not None else "the backend gives no memory analysis"
    return Section("memory analysis (XLA)", (KeyValues(rows),), note, id="memory")


def jaxpr_listing(record: JaxprRecord, summary: JaxprSummary | None, *, locations: LocationsMode | bool = "full",
                  depth: int | None = None, id: str = "", fold: bool = False, expandable: bool = False) -> CodeListing:
    """The jaxpr as JAX prints it, with its summary on top; each equation line links to its source and ops.

    ``fold`` folds library calls and library jaxprs (``report/views/jaxpr_fold.py``); ``expandable`` keeps
    the folded lines in blocks that start closed (HTML), instead of leaving them out.
    """
    layout = jaxpr_layout(record, JaxprRenderOptions(locations, depth, False, fold, expandable))
    lines = [CodeLine(tuple(line)) for line in layout_jaxpr_header(summary)] if summary is not None else []
    for i, line in enumerate(layout.lines):
        eqn, group = layout.line_eqns[i], layout.line_groups[i]
        src = ""
        ops_: tuple[str, ...] = ()
        if eqn is not None:
            src = location_key(eqn.location)
            key = eqn_key(layout.line_scopes[i], eqn.primitive, eqn.params)
            ops_ = (key, stablehlo_key(key))
        elif group is not None:
            src = location_key(group.location)
        lines.append(CodeLine(tuple(line), note=layout.locations[i], src=src, ops=ops_,
                              fold=layout.folds[i], unfold=layout.unfolds[i], folded=layout.closed[i]))
    return CodeListing(tuple(lines), "jaxpr", id=id)


@dataclass(frozen=True, slots=True)
class JaxprShown:
    """How the jaxpr section shows the jaxpr: ``locations`` mode, ``depth``, folding."""

    locations: LocationsMode | bool = "full"
    depth: int | None = None
    fold: bool = False
    #: Folded lines kept in closed blocks (HTML) rather than left out.
    expandable: bool = False


def _stage_sections(record: TraceRecord, stages: Collection[str], shown: JaxprShown, linked: bool,
                    page: str) -> Iterator[Section]:
    st = record.stages
    if "jaxpr" in stages and record.jaxpr is not None:
        by_line = lines_section(record, page)
        if by_line is not None:
            yield by_line
        listing = jaxpr_listing(record.jaxpr, record.summary, locations=shown.locations, depth=shown.depth,
                                id=f"{page}-jaxpr", fold=shown.fold, expandable=shown.expandable)
        note = "library calls folded (--no-fold-libraries shows them)" if shown.fold else ""
        yield Section("jaxpr", (listing,), note, gap=True, id=f"{page}-jaxpr-section")
    if st is None:
        yield from _compile_time(record, page)  # a compile that failed: its phases up to the failure
        return
    if "stablehlo" in stages and st.stablehlo is not None:
        note = "lowered" + (f" in {fmt_duration(st.lower_seconds)}" if st.lower_seconds else "")
        yield Section("StableHLO", (ir_listing(st.stablehlo, "stablehlo", linked, f"{page}-stablehlo"),), note,
                      gap=True, id=f"{page}-stablehlo-section")
    if "hlo" in stages:
        note = f"compiled for {st.backend}" + (f" in {fmt_duration(st.compile_seconds)}" if st.compile_seconds else "")
        body: Block = (ir_listing(st.hlo, "hlo", linked, f"{page}-hlo") if st.hlo
                       else Paragraph(pieces("n/a", "jitscope.muted")))
        yield Section("HLO (optimised)", (body,), note, gap=True, id=f"{page}-hlo-section")
        called = library_calls_section(record, page)
        if called is not None:
            yield called
    yield from _compile_time(record, page)
    if "cost" in stages:
        yield cost_section(st.cost)
    if "memory" in stages:
        yield memory_section(st.memory)


def _compile_time(record: TraceRecord, page: str) -> Iterator[Section]:
    if record.compile_time is not None:
        from jitscope.report.views.compile_time import compile_time_section

        yield compile_time_section(record.compile_time, page)


def cache_hit_paragraph(record: TraceRecord) -> Paragraph:
    """``call 2: cache hit (same key as call 1): f(f32[3])``."""
    return Paragraph(((f"call {record.call_index}: ", "jitscope.muted"),
                      (f"cache hit (same key as call {record.cache_hit_of})", "jitscope.good"),
                      (f": {_function(record.target)}({record.call})", "")))


def trace_page(record: TraceRecord, *, stages: Collection[str] = STAGES, locations: LocationsMode | bool = "full",
               depth: int | None = None, numbered: bool = False, linked: bool = False, page: str = "t1",
               fold: bool = False, expandable: bool = False) -> Section:
    """The whole view of one traced call; ``numbered`` shows its place in a call sequence."""
    blocks: list[Block] = header_blocks(record, numbered=numbered)
    blocks.append(seen_section(record))
    blocks += [s for s in (printed_section(record), effects_section(record)) if s is not None]
    if record.diagnostic is not None:
        blocks.append(diagnostic_section(record.diagnostic))
    else:
        shown = JaxprShown(locations, depth, fold, expandable)
        ir = list(_stage_sections(record, stages, shown, linked, page))
        listings = [s for s in ir if s.gap]
        if linked and listings and record.jaxpr is not None:
            sources = source_listings(record.jaxpr, f"{page}-src")
            before = [s for s in ir[: ir.index(listings[0])] if not s.gap]  # the by-line summary
            blocks += before
            blocks.append(Panels((Section("your source", tuple(sources) or (Paragraph(pieces("(not found)")),),
                                          id=f"{page}-source"),
                                  *listings)))
            blocks += [s for s in ir if not s.gap and s not in before]
        else:
            blocks += ir
        if record.sharding is not None:
            from jitscope.report.views.sharding import sharding_section

            blocks.append(sharding_section(record.sharding, page))
    return Section(record.target, tuple(blocks), level=1, id=page)


def trace_document(report: TraceReport, *, stages: Collection[str] = STAGES, locations: LocationsMode | bool = "full",
                   depth: int | None = None, linked: bool = False, fold: bool = False,
                   expandable: bool = False) -> Document:
    """The report as a document; ``fold`` folds library code in the jaxpr, ``expandable`` keeps it in closed
    blocks (HTML)."""
    calls = Counter(r.target for r in report.traces)
    blocks: list[Block] = []
    for i, record in enumerate(report.traces, 1):
        if record.cache_hit_of is not None:  # JAX would reuse the earlier program: nothing new to show
            blocks.append(cache_hit_paragraph(record))
        else:
            blocks.append(trace_page(record, stages=stages, locations=locations, depth=depth,
                                     numbered=calls[record.target] > 1, linked=linked, page=f"t{i}", fold=fold,
                                     expandable=expandable))
    env = tuple((str(k), str(v).lower() if isinstance(v, bool) else str(v)) for k, v in report.environment.items())
    title = "jitscope trace: " + ", ".join(dict.fromkeys(r.target for r in report.traces))
    return Document(title, "trace", tuple(blocks), meta=env)
