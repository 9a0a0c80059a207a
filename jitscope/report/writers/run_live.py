"""Render ``jitscope run``: one live line per compile, and the summary at exit.

Records in, rich renderables out (no jax here). The live line is modelled on torch's
``TORCH_LOGS=recompiles``: which function, which compile, where it was called from, and
every cache-key component that changed, so the cause is on the line itself.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from jitscope.model.run import CompileEvent, RunRecord
from jitscope.run.causes import describe_causes, phases_text


def render_event_line(event: CompileEvent) -> Text:
    """``jitscope: compile 3 of step (train.py:12) from train.py:40 [trace 4 ms, compile 80 ms]: x: shape ...``.

    "compile 3" counts this function's compiles, not its calls: a cached call never reaches
    Python, so counting calls would need a wrapper on the fast path (see ``CompileEvent.number``).
    """
    what = "compile" if event.compiled else "trace"
    tag = "jitscope: " if event.process is None else f"jitscope p{event.process}: "  # which process, in a job's log
    text = Text(tag, style="jitscope.muted")
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
    """The exit summary: per function, compiles, phase times, share of wall time, and the causes
    (``report/views/run.py``'s summary layout, through the terminal back end; imported here, not at the top,
    so the live line above costs no more than rich's Text)."""
    from jitscope.report.views.run import summary_section
    from jitscope.report.writers.terminal import render_block

    return render_block(summary_section(record))
