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
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from jitscope.model.jaxpr import (
    AvalRecord,
    EqnRecord,
    JaxprRecord,
    JaxprSummary,
    LiteralRecord,
    VarRecord,
    count_eqns,
)
from jitscope.render.jaxpr_header import format_bytes, layout_jaxpr_header
from jitscope.render.lines import Line, StyledLines, line_width, lines_to_plain, lines_to_text
from jitscope.view.links import scope_of

__all__ = [
    "JaxprLayout",
    "JaxprRenderOptions",
    "JaxprView",
    "format_bytes",
    "jaxpr_layout",
    "layout_jaxpr",
    "render_jaxpr",
    "render_jaxpr_text",
]

PRIM = "jaxpr.primitive"
VAR = "jaxpr.var"
TYPE = "jaxpr.type"
LIT = "jaxpr.literal"
PARAM = "jaxpr.param"
KW = "jaxpr.keyword"
LOC = "jaxpr.location"
MUTED = "jitscope.muted"

#: JAX's pretty-printer width: past it, parameters break one per line.
JAX_WIDTH = 80
#: Location annotations line up at this column at most; longer lines just get two spaces.
MAX_LOCATION_COLUMN = 80
#: Width assumed for plain text: header rows wrap here.
TEXT_WIDTH = 100


@dataclass(frozen=True, slots=True)
class JaxprRenderOptions:
    """How to render a jaxpr."""

    #: Annotate each equation with the user's ``file:line``.
    locations: bool = True
    #: Levels of nested jaxprs shown (the top-level jaxpr is level 0): 0 collapses every nested one,
    #: 1 shows a scan body but collapses what it contains; None shows all.
    depth: int | None = None
    #: Print the summary header (avals, counts, constants, effects) above the jaxpr.
    header: bool = True


class JaxprLayout:
    """Builds the lines of one rendering; ``lines[i]`` is annotated with ``locations[i]``.

    For linked views (the HTML report) it also records, per line, the equation it starts
    (``line_eqns``), the ``jit`` names it is nested in (``line_scopes``, as XLA's op_name
    paths say them: ``("jit(relu)",)``), and the nested jaxprs it opens (``folds``) or closes
    (``unfolds``).
    """

    def __init__(self, options: JaxprRenderOptions, width: int) -> None:
        self.options = options
        self.width = width
        self.lines: list[Line] = []
        self.locations: list[str] = []
        self.line_eqns: list[EqnRecord | None] = []
        self.line_scopes: list[tuple[str, ...]] = []
        self.folds: list[int] = []
        self.unfolds: list[int] = []
        self.scope: tuple[str, ...] = ()
        self.aval_texts: dict[int, str] = {}
        self.eqn_counts: dict[int, int] = {}
        self.location_texts: dict[int, str] = {}

    def emit(self, line: Line, location: str = "", eqn: EqnRecord | None = None) -> None:
        self.lines.append(line)
        self.locations.append(location)
        self.line_eqns.append(eqn)
        self.line_scopes.append(self.scope)
        self.folds.append(0)
        self.unfolds.append(0)

    def join_from(
        self, start: int, prefix: Line, parts: list[Line], sep: str, suffix: Line, rest: Line
    ) -> None:
        """Replace ``lines[start:]`` by one line if it fits JAX's width and loses no location.

        Like JAX's printer, the fit is measured up to the end of the group (``suffix``);
        ``rest`` (the operands after ``]``) may run past it.
        """
        if any(self.locations[start:]):
            return
        line = [*prefix]
        for i, part in enumerate(parts):
            if i:
                line.append((sep, ""))
            line += part[1:]  # drop the indentation piece
        line += suffix
        if line_width(line) > JAX_WIDTH:
            return
        eqn, scope = self.line_eqns[start], self.line_scopes[start]
        del self.lines[start:], self.locations[start:], self.line_eqns[start:], self.line_scopes[start:]
        del self.folds[start:], self.unfolds[start:]
        self.scope, outer = scope, self.scope
        self.emit(line + rest, eqn=eqn)
        self.scope = outer

    # -- atoms

    def aval(self, aval: AvalRecord) -> str:
        text = self.aval_texts.get(id(aval))
        if text is None:
            text = self.aval_texts[id(aval)] = ":" + str(aval)
        return text

    def binders(self, line: Line, binders: Iterable[VarRecord]) -> None:
        for i, v in enumerate(binders):
            if i:
                line.append((" ", ""))
            line.append((v.name, VAR))
            line.append((self.aval(v.aval), TYPE))

    def atoms(self, line: Line, atoms: Iterable[VarRecord | LiteralRecord], sep: str = " ") -> None:
        for i, a in enumerate(atoms):
            if i:
                line.append((sep, ""))
            if type(a) is VarRecord:
                line.append((a.name, VAR))
            else:
                line.append((a.value, LIT))  # type: ignore[union-attr]
                if a.typed:  # type: ignore[union-attr]
                    line.append((self.aval(a.aval), TYPE))

    # -- jaxprs

    def collapsed(self, record: JaxprRecord) -> str:
        n = self.eqn_counts.get(id(record))
        if n is None:
            n = self.eqn_counts[id(record)] = count_eqns(record)
        what = f"jaxpr {record.shared_name}" if record.shared_name else "jaxpr"
        return f"<{what}: {n} eqn{'' if n == 1 else 's'} collapsed>"

    def shared_definitions(self, root: JaxprRecord) -> None:
        """``let name = { ... } in`` for each shared jaxpr that will be referenced, dependencies first."""
        depth = self.options.depth
        if depth is not None and depth < 1:
            return
        seen: set[str] = set()

        def visit(record: JaxprRecord, level: int) -> None:
            for eqn in record.eqns:
                for _, sub in eqn.subjaxprs:
                    name = sub.shared_name
                    if name in seen:
                        continue
                    if name:
                        seen.add(name)
                    sub_level = 1 if name else level + 1
                    if depth is not None and sub_level > depth:
                        continue
                    visit(sub, sub_level)
                    if name:
                        self.scope = scope_of(eqn.primitive, eqn.params)
                        self.jaxpr(sub, "", [("let ", KW), (name, PRIM), (" = ", "")], 1)
                        self.scope = ()
                        self.lines[-1].append((" in", KW))

        visit(root, 0)

    def jaxpr(self, record: JaxprRecord, indent: str, prefix: Line, level: int) -> None:
        """Emit ``{ lambda consts ; invars. let`` ... ``in (outvars) }``; ``prefix`` starts the first line."""
        start = len(self.lines)
        head: Line = [(indent, ""), *prefix, ("{ ", ""), ("lambda ", KW)]
        self.binders(head, record.constvars)
        head.append(("; ", ""))
        self.binders(head, record.invars)
        head += [(". ", ""), ("let", KW)]
        self.emit(head)
        if level:
            self.folds[-1] += 1
        body = indent + "    "
        for eqn in record.eqns:
            self.eqn(eqn, body, level)
        tail: Line = [(indent + "  ", ""), ("in ", KW), ("(", "")]
        self.atoms(tail, record.outvars, sep=", ")
        tail.append((",) }" if len(record.outvars) == 1 else ") }", ""))
        self.emit(tail)
        if level:
            self.unfolds[-1] += 1
        if len(self.lines) - start == len(record.eqns) + 2:  # every equation on one line
            eqn_lines = self.lines[start + 1 : -1]
            self.join_from(start, [*head, (" ", "")], eqn_lines, "; ", [(" ", ""), *tail[1:]], [])

    def location(self, eqn: EqnRecord) -> str:
        loc = eqn.location
        if loc is None or not self.options.locations:
            return ""
        text = self.location_texts.get(id(loc))
        if text is None:
            text = self.location_texts[id(loc)] = f"# {os.path.basename(loc.file)}:{loc.line}"
        return text

    def eqn(self, eqn: EqnRecord, indent: str, level: int) -> None:
        line: Line = [(indent, "")]
        if eqn.outvars:
            self.binders(line, eqn.outvars)
            line.append((" = ", ""))
        line.append((eqn.primitive, PRIM))
        if not eqn.params and not eqn.subjaxprs:  # the common case, kept short
            if eqn.invars:
                line.append((" ", ""))
                self.atoms(line, eqn.invars)
            self.emit(line, self.location(eqn), eqn)
            return
        start = len(self.lines)
        location = self.location(eqn)
        operands: Line = []
        if eqn.invars:
            operands.append((" ", ""))
            self.atoms(operands, eqn.invars)
        items: list[tuple[str, str | JaxprRecord, str]] = [(k, v, PARAM) for k, v in eqn.params]
        depth = self.options.depth
        for key, sub in eqn.subjaxprs:
            if sub.shared_name and (depth is None or depth >= 1):
                items.append((key, sub.shared_name, PRIM))
            elif sub.shared_name or (depth is not None and level + 1 > depth):
                items.append((key, self.collapsed(sub), MUTED))
            else:
                items.append((key, sub, ""))
        if eqn.subjaxprs:
            # JAX's order: name= first, then by key, jaxprs among the other parameters.
            items.sort(key=lambda p: (p[0] != "name", p[0]))
        expanded = any(isinstance(value, JaxprRecord) for _, value, _ in items)
        if not expanded:
            flat = [*line]
            if items:
                flat.append(("[", ""))
                for i, (key, value, style) in enumerate(items):
                    flat += [((" " if i else "") + key + "=", PARAM), (value, style)]  # type: ignore[list-item]
                flat.append(("]", ""))
            if not items or line_width(flat) <= JAX_WIDTH:
                self.emit(flat + operands, location, eqn)
                return
        # JAX's broken form: one parameter per line, operands after the closing bracket.
        line.append(("[", ""))
        self.emit(line, location, eqn)
        outer = self.scope
        self.scope = outer + scope_of(eqn.primitive, eqn.params)
        self.broken_params(items, indent + "  ", level)
        self.scope = outer
        self.emit([(indent, ""), ("]", ""), *operands])
        if expanded and len(self.lines) - start == len(items) + 2:  # nested jaxprs fitted on one line
            self.join_from(start, [*line], self.lines[start + 1 : -1], " ", [("]", "")], operands)

    def broken_params(self, items: list[tuple[str, str | JaxprRecord, str]], indent: str, level: int) -> None:
        """``key=value`` lines; ``branches[0]``, ``branches[1]``... become JAX's ``branches=( ... )``."""
        i = 0
        while i < len(items):
            key, value, style = items[i]
            base, _, index = key.partition("[")
            group = 1
            if index:
                while i + group < len(items) and items[i + group][0].startswith(base + "["):
                    group += 1
            if not index:
                if isinstance(value, JaxprRecord):
                    self.jaxpr(value, indent, [(key + "=", PARAM)], level + 1)
                else:
                    self.emit([(indent, ""), (key + "=", PARAM), (value, style)])
            else:
                self.emit([(indent, ""), (base + "=", PARAM), ("(", "")])
                for _, member, member_style in items[i : i + group]:
                    if isinstance(member, JaxprRecord):
                        self.jaxpr(member, indent + "  ", [], level + 1)
                    else:
                        self.emit([(indent + "  ", ""), (member, member_style)])
                self.emit([(indent, ""), (")", "")])
            i += group

    # -- output

    def location_column(self, widths: list[int]) -> int:
        """Where locations start: aligned, but never pushed past the width."""
        longest = max(len(loc) for loc in self.locations if loc)
        return max(min(max(widths), MAX_LOCATION_COLUMN, self.width - longest - 2), 0)

    def annotated(self) -> list[Line]:
        """Lines with their locations appended, aligned on one column."""
        lines, locations = self.lines, self.locations
        if not any(locations):
            return lines
        widths = [line_width(line) if loc else 0 for line, loc in zip(lines, locations, strict=True)]
        column = self.location_column(widths)
        return [
            [*line, (" " * max(column - width, 0) + "  ", ""), (loc, LOC)] if loc else line
            for line, loc, width in zip(lines, locations, widths, strict=True)
        ]

    def annotated_plain(self) -> str:
        """``annotated`` as plain text, joining each line once (the fast path for big jaxprs)."""
        texts = ["".join([t for t, _ in line]) for line in self.lines]
        locations = self.locations
        if any(locations):
            widths = [len(text) if loc else 0 for text, loc in zip(texts, locations, strict=True)]
            column = self.location_column(widths)
            texts = [
                f"{text}{' ' * max(column - len(text), 0)}  {loc}" if loc else text
                for text, loc in zip(texts, locations, strict=True)
            ]
        return "\n".join(texts) + "\n"


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
    locations: bool = True,
    depth: int | None = None,
    header: bool = True,
) -> str:
    """Plain text (for ``--out`` files, pipes and tests), ending in a newline."""
    opts = JaxprRenderOptions(locations, depth, header)
    body = _layout(record, opts, TEXT_WIDTH).annotated_plain()
    if header and summary is not None:
        return lines_to_plain(layout_jaxpr_header(summary, TEXT_WIDTH)) + body
    return body


@dataclass(frozen=True, slots=True)
class JaxprView:
    """A rich renderable for a jaxpr; build it with ``render_jaxpr``."""

    record: JaxprRecord
    summary: JaxprSummary | None = None
    options: JaxprRenderOptions = JaxprRenderOptions()

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
    locations: bool = True,
    depth: int | None = None,
    header: bool = True,
) -> JaxprView:
    """A rich renderable: ``console.print(render_jaxpr(record, summarize(record)))``."""
    return JaxprView(record, summary, JaxprRenderOptions(locations, depth, header))
