"""Render a ``JaxprRecord``: JAX's own layout, highlighted, with the user's ``file:line`` per equation.

The layout follows ``str(jaxpr)`` so users recognise it::

    { lambda ; a:f32[2] b:f32[2]. let
        c:f32[2] = add a 1.0:f32[]      # model.py:3
      in (c,) }

As in JAX, parameters go one per line when an equation has nested jaxprs or would pass
80 columns, jaxprs used at several places are printed once on top (``let block = { ... }
in``), and, without locations, a small jaxpr that fits in 80 columns stays on one line, so
``render_jaxpr_text(r, locations=False, header=False)`` usually equals ``str(jaxpr)``.

Deliberate deviations: a nested jaxpr used once stays where it is used even when it is big
(JAX hoists those with more than 10 equations to the top), so indentation and ``depth``
keep their meaning; long binder and operand lists are not folded; state primitives
(``swap``/``get`` on refs) print in the generic form; a collapsed or shared tuple of jaxprs
shows as ``branches[0]=...``. Nested jaxprs deeper than ``depth`` collapse to
``<jaxpr: 12 eqns collapsed>``.

Locations (``locations``): ``full`` annotates an equation with the user's line and, when it came
from a library the line called, that library's line (``# gpt.py:17 <- flax/nnx/nn/attention.py:288``);
``user`` with the user's line only; ``none`` with nothing. With ``fold`` (``report/views/jaxpr_fold.py``),
library calls and library jaxprs fold to one line each and long variable lists are shortened;
``expand_folds`` (HTML) keeps the folded lines, in blocks that start closed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jitscope.model.jaxpr import JaxprRecord, JaxprSummary
from jitscope.report.views.jaxpr_header import format_bytes, layout_jaxpr_header
from jitscope.report.views.jaxpr_layout import (
    LOCATIONS,
    TEXT_WIDTH,
    JaxprLayout,
    JaxprRenderOptions,
    LocationsMode,
    locations_mode,
)
from jitscope.report.views.lines import Line, StyledLines, lines_to_plain, lines_to_text

if TYPE_CHECKING:  # rich only where a jaxpr is printed through it (see lines.py)
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.text import Text

__all__ = [
    "LOCATIONS",
    "JaxprLayout",
    "JaxprRenderOptions",
    "JaxprView",
    "LocationsMode",
    "format_bytes",
    "jaxpr_layout",
    "layout_jaxpr",
    "locations_mode",
    "render_jaxpr",
    "render_jaxpr_text",
]


def jaxpr_layout(record: JaxprRecord, options: JaxprRenderOptions, width: int = TEXT_WIDTH) -> JaxprLayout:
    """The laid-out lines with what each one links to (for linked views; ``layout_jaxpr`` for text)."""
    return _layout(record, options, width)


def _layout(record: JaxprRecord, options: JaxprRenderOptions, width: int) -> JaxprLayout:
    layout = JaxprLayout(options, width)
    layout.shared_definitions(record)
    layout.jaxpr(record, "", [], 0)
    return layout


def layout_jaxpr(
    record: JaxprRecord,
    summary: JaxprSummary | None = None,
    options: JaxprRenderOptions | None = None,
    width: int = TEXT_WIDTH,
) -> list[Line]:
    """The rendering as lines of ``(text, style name)`` pieces (the header needs ``summary``).

    ``width`` is where the header wraps and the location column must end; equation lines
    are never folded here (a viewer or terminal can do it).
    """
    opts = options or JaxprRenderOptions()
    body = _layout(record, opts, width).annotated()
    if opts.header and summary is not None:
        return layout_jaxpr_header(summary, width) + body
    return body


def render_jaxpr_text(
    record: JaxprRecord,
    summary: JaxprSummary | None = None,
    *,
    locations: LocationsMode | bool = "full",
    depth: int | None = None,
    header: bool = True,
    fold: bool = False,
) -> str:
    """Plain text (for ``--out`` files, pipes and tests), ending in a newline."""
    opts = JaxprRenderOptions(locations, depth, header, fold)
    body = _layout(record, opts, TEXT_WIDTH).annotated_plain()
    if header and summary is not None:
        return lines_to_plain(layout_jaxpr_header(summary, TEXT_WIDTH)) + body
    return body


@dataclass(frozen=True, slots=True)
class JaxprView:
    """A rich renderable for a jaxpr; build it with ``render_jaxpr``."""

    record: JaxprRecord
    summary: JaxprSummary | None = None
    options: JaxprRenderOptions = field(default_factory=JaxprRenderOptions)

    def to_text(self, width: int = TEXT_WIDTH) -> Text:
        """The whole rendering as one styled ``Text``."""
        return lines_to_text(layout_jaxpr(self.record, self.summary, self.options, width))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = layout_jaxpr(self.record, self.summary, self.options, options.max_width)
        yield StyledLines(lines)


def render_jaxpr(
    record: JaxprRecord,
    summary: JaxprSummary | None = None,
    *,
    locations: LocationsMode | bool = "full",
    depth: int | None = None,
    header: bool = True,
    fold: bool = False,
) -> JaxprView:
    """A rich renderable: ``console.print(render_jaxpr(record, summarize(record)))``."""
    return JaxprView(record, summary, JaxprRenderOptions(locations, depth, header, fold))
