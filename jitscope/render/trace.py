"""Render a ``TraceRecord``: what the function saw, its trace-time effects, and every stage.

Everything here is a rich renderable built from records; nothing imports jax. Plain
text (pipes, NO_COLOR, tests) comes from the same renderables on a colourless console.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from jitscope.model.trace import STAGES, CostRecord, Diagnostic, MemoryRecord, TraceRecord
from jitscope.render.ir import render_ir
from jitscope.render.jaxpr import format_bytes, render_jaxpr


def _heading(title: str, note: str = "") -> Rule:
    text = Text(title, style="jitscope.heading")
    if note:
        text.append(f"  {note}", style="jitscope.muted")
    return Rule(text, align="left", style="jitscope.muted")


def _fmt_count(value: float | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}".rstrip()
    return f"{value:.4g} {unit}".rstrip()


def _fmt_bytes(value: float | None) -> str:
    return "n/a" if value is None else format_bytes(int(value))


def render_header(record: TraceRecord, *, numbered: bool = False) -> RenderableType:
    title = Text(record.target, style="jitscope.title")
    lines: list[RenderableType] = [Rule(title, align="left", characters="━")]
    call = Text(f"call {record.call_index}: " if numbered else "call: ", style="jitscope.muted")
    call.append(f"{record.target.rsplit(':', 1)[-1]}({record.call})")
    lines.append(call)
    statics = []
    if record.static_argnums:
        statics.append(f"static_argnums={record.static_argnums}")
    if record.static_argnames:
        statics.append(f"static_argnames={record.static_argnames}")
    if record.donate_argnums:
        statics.append(f"donate_argnums={record.donate_argnums}")
    if statics:
        lines.append(Text("jit options: " + ", ".join(statics), style="jitscope.muted"))
    for note in record.warnings:
        lines.append(Text(f"warning: {note}", style="jitscope.warn"))
    return Group(*lines)


def render_seen(record: TraceRecord) -> RenderableType:
    """The seeds' ``DynamicJaxprTracer`` peek, as a table: each argument as the body saw it.

    Cells are ``Text``: a str cell would be read as rich markup, and paths and reprs are the user's text.
    """
    runs = "once" if record.body_runs == 1 else f"{record.body_runs} times"
    table = Table(box=None, pad_edge=False, show_header=True, header_style="jitscope.muted")
    table.add_column("argument")
    table.add_column("kind")
    table.add_column("seen as")
    table.add_column("value")
    for arg in record.seen:
        if arg.kind == "traced":
            note = "weak-typed (from a Python scalar)" if arg.weak_type else ""
            table.add_row(Text(arg.path), Text("traced", "jaxpr.var"), Text(arg.type_name), Text(arg.aval, "jaxpr.type"))
            if note:
                table.add_row("", "", "", Text(note, "jitscope.muted"))
        else:
            table.add_row(Text(arg.path), Text("static", "jaxpr.literal"), Text(arg.type_name), Text(arg.value_repr))
    watched = " with the effect monitor on" if record.effects is not None else ""
    note = f"body ran {runs} while tracing, {record.trace_seconds * 1e3:.1f} ms{watched}"
    body: list[RenderableType] = [_heading("what the function saw", note)]
    body.append(table if record.seen else Text("(no arguments)", style="jitscope.muted"))
    return Group(*body)


def render_printed(record: TraceRecord) -> RenderableType | None:
    if not record.printed:
        return None
    text = Text("\n".join("  " + line for line in record.printed.rstrip("\n").splitlines()))
    return Group(_heading("printed while tracing", "runs once per trace, never in the compiled program"), text)


def render_effects(record: TraceRecord) -> RenderableType | None:
    effects = record.effects.effects if record.effects else ()
    if not effects:
        return None
    lines: list[RenderableType] = [_heading("side effects at trace time", f"{len(effects)} found: they run while tracing only")]
    for effect in sorted(effects, key=lambda e: (e.location.file, e.location.line)):
        line = Text("  ! ", style="jitscope.warn")
        line.append(effect.describe())
        lines.append(line)
    return Group(*lines)


def render_diagnostic(diag: Diagnostic, *, show_traceback: bool = True) -> RenderableType:
    parts: list[RenderableType] = [_heading("tracing failed", diag.kind.replace("_", " "))]
    head = Text("error: ", style="jitscope.bad")
    head.append(diag.message)
    parts.append(head)
    if diag.location is not None:
        where = Text("  --> ", style="jitscope.muted")
        where.append(f"{diag.location.file}:{diag.location.line}", style="jitscope.path")
        where.append(f" in {diag.location.function}", style="jitscope.muted")
        parts.append(where)
    if diag.source_line:
        lineno = str(diag.location.line) if diag.location else ""
        frame = Text(f"  {lineno} | ", style="jitscope.muted")
        frame.append(diag.source_line.strip())
        parts.append(frame)
    fix = Text("  fix: ", style="jitscope.good")
    fix.append(diag.fix)
    parts.append(fix)
    if show_traceback and diag.traceback:
        indented = "\n".join("  " + line for line in diag.traceback.splitlines())
        parts.append(Text(indented, style="jitscope.muted"))
    return Group(*parts)


def render_cost(cost: CostRecord | None) -> RenderableType:
    table = Table(box=None, pad_edge=False, show_header=False)
    table.add_column(style="jitscope.muted")
    table.add_column(justify="right", style="jitscope.number")
    c = cost or CostRecord()
    table.add_row("flops", _fmt_count(c.flops))
    table.add_row("transcendentals", _fmt_count(c.transcendentals))
    table.add_row("bytes accessed", _fmt_bytes(c.bytes_accessed))
    ai = c.arithmetic_intensity
    table.add_row("arithmetic intensity", "n/a" if ai is None else f"{ai:.3g} flop/byte")
    note = "" if cost is not None else "the backend gives no cost analysis"
    return Group(_heading("cost analysis (XLA)", note), table)


def render_memory(memory: MemoryRecord | None) -> RenderableType:
    m = memory or MemoryRecord()
    table = Table(box=None, pad_edge=False, show_header=False)
    table.add_column(style="jitscope.muted")
    table.add_column(justify="right", style="jitscope.number")
    for label, value in (
        ("arguments", m.argument_bytes),
        ("outputs", m.output_bytes),
        ("aliased (donated)", m.alias_bytes),
        ("temporaries", m.temp_bytes),
        ("generated code", m.generated_code_bytes),
        ("peak (args + outputs + temps - aliased)", m.peak_bytes),
    ):
        table.add_row(label, _fmt_bytes(value))
    note = "" if memory is not None else "the backend gives no memory analysis"
    return Group(_heading("memory analysis (XLA)", note), table)


def _stage_sections(record: TraceRecord, stages: Collection[str], locations: bool, depth: int | None
                    ) -> Iterator[RenderableType]:
    st = record.stages
    if "jaxpr" in stages and record.jaxpr is not None:
        yield _heading("jaxpr")
        yield render_jaxpr(record.jaxpr, record.summary, locations=locations, depth=depth)
    if st is None:
        return
    if "stablehlo" in stages and st.stablehlo is not None:
        yield _heading("StableHLO", "lowered" + (f" in {st.lower_seconds * 1e3:.1f} ms" if st.lower_seconds else ""))
        yield render_ir(st.stablehlo, "stablehlo")
    if "hlo" in stages:
        note = f"compiled for {st.backend}" + (f" in {st.compile_seconds * 1e3:.1f} ms" if st.compile_seconds else "")
        yield _heading("HLO (optimised)", note)
        yield render_ir(st.hlo, "hlo") if st.hlo else Text("n/a", style="jitscope.muted")
    if "cost" in stages:
        yield render_cost(st.cost)
    if "memory" in stages:
        yield render_memory(st.memory)


def render_cache_hit(record: TraceRecord) -> Text:
    """One line for a call JAX answers from its cache: ``call 2: cache hit (same key as call 1): f(f32[3])``."""
    text = Text(f"call {record.call_index}: ", style="jitscope.muted")
    text.append(f"cache hit (same key as call {record.cache_hit_of})", style="jitscope.good")
    text.append(f": {record.target.rsplit(':', 1)[-1]}({record.call})")
    return text


def render_trace(
    record: TraceRecord,
    *,
    stages: Collection[str] = STAGES,
    locations: bool = True,
    depth: int | None = None,
    numbered: bool = False,
) -> RenderableType:
    """The whole ``jitscope trace`` view of one traced call; ``numbered`` shows its place in a sequence."""
    parts: list[RenderableType | None] = [render_header(record, numbered=numbered), render_seen(record)]
    parts += [render_printed(record), render_effects(record)]
    if record.diagnostic is not None:
        parts.append(render_diagnostic(record.diagnostic))
    else:
        parts.extend(_stage_sections(record, stages, locations, depth))
    # A blank line between sections keeps long reports scannable.
    spaced: list[RenderableType] = []
    for part in parts:
        if part is not None:
            spaced += [part, Text("")]
    return Group(*spaced[:-1])
