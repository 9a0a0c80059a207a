"""Render a ``TraceRecord`` for the terminal: the trace view model (``view/trace.py``) through the rich back end.

What to show lives in the view model; how the terminal shows it lives in ``view/rich_text.py``.
Plain text (pipes, NO_COLOR, tests) comes from the same renderables on a colourless console.
"""

from __future__ import annotations

from collections.abc import Collection

from rich.console import RenderableType

from jitscope.model.trace import STAGES, CostRecord, MemoryRecord, TraceRecord
from jitscope.view import trace as view
from jitscope.view.rich_text import render_block


def render_seen(record: TraceRecord) -> RenderableType:
    """Each argument as the body saw it (cells are never read as markup: they are the user's text)."""
    return render_block(view.seen_section(record))


def render_cost(cost: CostRecord | None) -> RenderableType:
    return render_block(view.cost_section(cost))


def render_memory(memory: MemoryRecord | None) -> RenderableType:
    return render_block(view.memory_section(memory))


def render_cache_hit(record: TraceRecord) -> RenderableType:
    """One line for a call JAX answers from its cache: ``call 2: cache hit (same key as call 1): f(f32[3])``."""
    return render_block(view.cache_hit_paragraph(record))


def render_trace(
    record: TraceRecord,
    *,
    stages: Collection[str] = STAGES,
    locations: bool = True,
    depth: int | None = None,
    numbered: bool = False,
) -> RenderableType:
    """The whole ``jitscope trace`` view of one traced call; ``numbered`` shows its place in a sequence."""
    return render_block(view.trace_page(record, stages=stages, locations=locations, depth=depth, numbered=numbered))
