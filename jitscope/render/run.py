"""Render ``jitscope run``: one live line per compile, and the summary at exit.

Records in, rich renderables out (no jax here). The live line is modelled on torch's
``TORCH_LOGS=recompiles``: which function, which compile, where it was called from, and
every cache-key component that changed, so the cause is on the line itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from jitscope.model.run import USER, CompileEvent, FunctionSummary, RunRecord
from jitscope.run.summary import should_log  # noqa: F401 - re-exported: the live-line filter
from jitscope.view.causes import HINTS, VIA_HINTS, describe_causes, phases_text  # noqa: F401 - re-exported
from jitscope.view.format import fmt_duration as fmt_time
from jitscope.view.format import fmt_share

#: How many recompile causes the summary lists per function before "... and N more".
MAX_CAUSES = 4


def render_event_line(event: CompileEvent) -> Text:
    """``jitscope: compile 3 of step (train.py:12) from train.py:40 [trace 4 ms, compile 80 ms]: x: shape ...``.

    "compile 3" counts this function's compiles, not its calls: a cached call never reaches
    Python, so counting calls would need a wrapper on the fast path (see ``CompileEvent.number``).
    """
    what = "compile" if event.compiled else "trace"
    text = Text("jitscope: ", style="jitscope.muted")
    text.append(f"{what} {event.number}", style="jitscope.warn" if event.number > 1 else "jitscope.title")
    text.append(f" of {event.function}")
    where = [str(event.defined_at)] if event.defined_at is not None else []
    if event.via:
        where.append(event.via)
    if where:
        text.append(f" ({', '.join(where)})", style="jitscope.path")
    if event.call_site is not None:
        text.append(" from ")
        text.append(str(event.call_site), style="jitscope.path")
    text.append(f" [{phases_text(event.trace_s, event.lower_s, event.compile_s)}]", style="jitscope.muted")
    causes = describe_causes(event)
    text.append(f": {causes}" if causes else f": {event.signature}")
    if event.error:
        text.append(f" (tracing raised {event.error})", style="jitscope.bad")
    for effect in event.effects:
        text.append("\n  trace-time side effect: ", style="jitscope.warn")
        text.append(effect.describe())
    return text


def render_summary(record: RunRecord) -> RenderableType:
    """The exit summary: per function, compiles, phase times, share of wall time, and the causes."""
    mine = [f for f in record.functions if f.kind == USER]
    internal = [f for f in record.functions if f.kind != USER]
    total = record.compile_s
    recompiles = sum(max(f.events - 1, 0) for f in mine)
    head = Text("jitscope run: ", style="jitscope.title")
    head.append(f"{record.program} {record.outcome} after {fmt_time(record.wall_s)}; ")
    head.append(f"{sum(f.compiles for f in mine)} compiles of {len(mine)} jitted function{'s' * (len(mine) != 1)} "
                f"({recompiles} recompiles), {fmt_time(total)} tracing and compiling "
                f"= {fmt_share(total, record.wall_s)} of wall time")
    parts: list[RenderableType] = [head]
    if mine:
        parts.append(_functions_table(mine, record.wall_s))
        parts.extend(_cause_lines(mine, record.events))
    if internal:
        count = sum(f.events for f in internal)
        names = ", ".join(f"{f.function} x{f.events}" if f.events > 1 else f.function for f in internal[:6])
        more = ", ..." if len(internal) > 6 else ""
        parts.append(Text(f"internal compiles (JAX's eager op-by-op execution, libraries' own jits): {count} in "
                          f"{fmt_time(sum(f.total_s for f in internal))}: {names}{more}", style="jitscope.muted"))
    effects = [e for e in record.events if e.effects]
    if effects:
        seen: dict[str, int] = {}
        for event in effects:
            for effect in event.effects:
                seen[effect.describe()] = seen.get(effect.describe(), 0) + 1
        parts.append(Text("trace-time side effects (they run once per trace, never in the compiled program):",
                          style="jitscope.warn"))
        parts.extend(Text(f"  {line}" + (f" [{n} traces]" if n > 1 else "")) for line, n in seen.items())
    parts.extend(Text(f"note: {note}", style="jitscope.muted") for note in record.notes)
    if not record.events:
        parts.append(Text("no JAX traces or compiles were seen", style="jitscope.muted"))
    return Group(*parts)


def _functions_table(functions: Sequence[FunctionSummary], wall_s: float) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="jitscope.heading")
    for name, justify in (("function", "left"), ("defined at", "left"), ("compiles", "right"),
                          ("trace", "right"), ("lower", "right"), ("compile", "right"), ("share", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for f in functions:
        compiles = Text(str(f.compiles if f.compiles else f.events),
                        style="jitscope.warn" if f.events > 1 else "jitscope.number")
        table.add_row(Text(f.function), Text(str(f.defined_at or "?"), style="jitscope.path"), compiles,
                      fmt_time(f.trace_s), fmt_time(f.lower_s), fmt_time(f.compile_s), fmt_share(f.total_s, wall_s))
    return table


def _cause_lines(functions: Sequence[FunctionSummary], events: Sequence[CompileEvent]) -> list[Text]:
    lines = []
    for f in functions:
        again = [e for e in events if e.function == f.function and e.defined_at == f.defined_at and e.number > 1]
        if not again:
            continue
        lines.append(Text(f"{f.function}: {len(again)} recompile{'s' if len(again) > 1 else ''}, because:",
                          style="jitscope.title"))
        for event in again[:MAX_CAUSES]:
            line = Text(f"  {event.number}: ")
            if event.call_site is not None:
                line.append(str(event.call_site), style="jitscope.path")
                line.append(" ")
            line.append(describe_causes(event))
            lines.append(line)
        if len(again) > MAX_CAUSES:
            counts = ", ".join(f"{name} x{n}" for name, n in f.causes[:4])
            lines.append(Text(f"  ... and {len(again) - MAX_CAUSES} more (all causes: {counts})",
                              style="jitscope.muted"))
    return lines
