"""Render a ``JaxprRecord``: JAX's own layout, highlighted, with the user's ``file:line`` per equation.

The layout follows ``str(jaxpr)`` so users recognise it::

    { lambda ; a:f32[2] b:f32[2]. let
        c:f32[2] = add a 1.0:f32[]      # model.py:3
      in (c,) }

Jaxprs used at several places are printed once on top (``let block = { ... } in``), as JAX
does. Nested jaxprs deeper than ``depth`` collapse to ``<jaxpr: 12 eqns collapsed>``.

One layout pass produces lines of ``(text, style name)`` pieces; plain text joins them, and
the rich view turns them straight into segments. Rich's word wrapping is what makes a
20,000-line ``Text`` slow, so it is used only for the rare line wider than the console.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text

from jitscope.model.jaxpr import (
    AvalRecord,
    EqnRecord,
    JaxprRecord,
    JaxprSummary,
    LiteralRecord,
    VarRecord,
    count_eqns,
)

PRIM = "jaxpr.primitive"
VAR = "jaxpr.var"
TYPE = "jaxpr.type"
LIT = "jaxpr.literal"
PARAM = "jaxpr.param"
KW = "jaxpr.keyword"
LOC = "jaxpr.location"
LABEL = "jaxpr.label"
NUM = "jitscope.number"
MUTED = "jitscope.muted"

#: Location annotations line up at this column at most; longer lines just get two spaces.
MAX_LOCATION_COLUMN = 80
#: Width assumed for plain text: header rows wrap here.
TEXT_WIDTH = 100

Piece = tuple[str, str]
Line = list[Piece]


@dataclass(frozen=True, slots=True)
class JaxprRenderOptions:
    """How to render a jaxpr."""

    #: Annotate each equation with the user's ``file:line``.
    locations: bool = True
    #: Show nested jaxprs this many levels deep; deeper ones collapse (None: show all).
    depth: int | None = None
    #: Print the summary header (avals, counts, constants, effects) above the jaxpr.
    header: bool = True


def format_bytes(n: int) -> str:
    """1023 B, 1.5 KiB, 2.0 MiB ..."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _location_text(eqn: EqnRecord) -> str:
    loc = eqn.location
    return f"# {os.path.basename(loc.file)}:{loc.line}" if loc is not None else ""


class _Layout:
    """Builds the lines of one rendering; ``lines[i]`` is annotated with ``locations[i]``."""

    def __init__(self, options: JaxprRenderOptions, width: int) -> None:
        self.options = options
        self.width = width
        self.lines: list[Line] = []
        self.locations: list[str] = []
        self.aval_texts: dict[int, str] = {}
        self.eqn_counts: dict[int, int] = {}

    def emit(self, line: Line, location: str = "") -> None:
        self.lines.append(line)
        self.locations.append(location)

    # -- atoms

    def aval(self, aval: AvalRecord) -> str:
        text = self.aval_texts.get(id(aval))
        if text is None:
            text = ":" + str(aval)
            self.aval_texts[id(aval)] = text
        return text

    def binders(self, line: Line, binders: Iterable[VarRecord]) -> None:
        first = True
        for v in binders:
            if not first:
                line.append((" ", ""))
            first = False
            line.append((v.name, VAR))
            line.append((self.aval(v.aval), TYPE))

    def atoms(self, line: Line, atoms: Iterable[VarRecord | LiteralRecord], sep: str = " ") -> None:
        first = True
        for a in atoms:
            if not first:
                line.append((sep, ""))
            first = False
            if type(a) is VarRecord:
                line.append((a.name, VAR))
            else:
                line.append((a.value, LIT))  # type: ignore[union-attr]
                line.append((self.aval(a.aval), TYPE))

    # -- jaxprs

    def count(self, record: JaxprRecord) -> int:
        n = self.eqn_counts.get(id(record))
        if n is None:
            n = self.eqn_counts[id(record)] = count_eqns(record)
        return n

    def collapsed(self, record: JaxprRecord) -> str:
        n = self.count(record)
        what = f"jaxpr {record.shared_name}" if record.shared_name else "jaxpr"
        return f"<{what}: {n} eqn{'' if n == 1 else 's'} collapsed>"

    def shared_definitions(self, root: JaxprRecord) -> None:
        """``let name = { ... } in`` for each shared jaxpr, dependencies first."""
        depth = self.options.depth
        if depth is not None and depth < 1:
            return
        seen: set[str] = set()

        def visit(record: JaxprRecord, level: int) -> None:
            for eqn in record.eqns:
                for _, sub in eqn.subjaxprs:
                    name = sub.shared_name
                    if name and name in seen:
                        continue
                    if name:
                        seen.add(name)
                    sub_level = 1 if name else level + 1
                    if depth is not None and sub_level > depth:
                        continue
                    visit(sub, sub_level)
                    if name:
                        self.jaxpr(sub, "", [("let ", KW), (name, PRIM), (" = ", "")], 1)
                        self.lines[-1].append((" in", KW))

        visit(root, 0)

    def jaxpr(self, record: JaxprRecord, indent: str, prefix: Line, level: int) -> None:
        """Emit ``{ lambda consts ; invars. let`` ... ``in (outvars) }``; ``prefix`` starts the first line."""
        head: Line = [(indent, ""), *prefix, ("{ ", ""), ("lambda ", KW)]
        self.binders(head, record.constvars)
        head.append(("; ", ""))
        self.binders(head, record.invars)
        head.append((". ", ""))
        head.append(("let", KW))
        self.emit(head)
        body = indent + "    "
        for eqn in record.eqns:
            self.eqn(eqn, body, level)
        tail: Line = [(indent + "  ", ""), ("in ", KW), ("(", "")]
        self.atoms(tail, record.outvars, sep=", ")
        tail.append((",) }" if len(record.outvars) == 1 else ") }", ""))
        self.emit(tail)

    def eqn(self, eqn: EqnRecord, indent: str, level: int) -> None:
        line: Line = [(indent, "")]
        if eqn.outvars:
            self.binders(line, eqn.outvars)
            line.append((" = ", ""))
        line.append((eqn.primitive, PRIM))
        location = _location_text(eqn) if self.options.locations else ""
        # Sub-jaxprs shown in full force JAX's one-parameter-per-line form.
        expanded = []
        inline: list[tuple[str, str, str]] = [(k, v, PARAM) for k, v in eqn.params]
        depth = self.options.depth
        for key, sub in eqn.subjaxprs:
            if sub.shared_name:
                if depth is None or depth >= 1:
                    inline.append((key, sub.shared_name, PRIM))
                else:
                    inline.append((key, self.collapsed(sub), MUTED))
            elif depth is not None and level + 1 > depth:
                inline.append((key, self.collapsed(sub), MUTED))
            else:
                expanded.append((key, sub))
        if eqn.subjaxprs:
            # JAX's order: name= first, then parameters sorted by key, jaxprs among them.
            inline.sort(key=lambda p: (p[0] != "name", p[0]))
        if not expanded:
            if inline:
                line.append(("[", ""))
                for i, (key, value, style) in enumerate(inline):
                    line.append(((" " if i else "") + key + "=", PARAM))
                    line.append((value, style))
                line.append(("]", ""))
            if eqn.invars:
                line.append((" ", ""))
                self.atoms(line, eqn.invars)
            self.emit(line, location)
            return
        line.append(("[", ""))
        self.emit(line, location)
        inner = indent + "  "
        items: list[tuple[str, str | JaxprRecord, str]] = [*inline, *((k, sub, "") for k, sub in expanded)]
        items.sort(key=lambda p: (p[0] != "name", p[0]))
        for key, item, style in items:
            if isinstance(item, JaxprRecord):
                self.jaxpr(item, inner, [(key + "=", PARAM)], level + 1)
            else:
                self.emit([(inner, ""), (key + "=", PARAM), (item, style)])
        close: Line = [(indent, ""), ("]", "")]
        if eqn.invars:
            close.append((" ", ""))
            self.atoms(close, eqn.invars)
        self.emit(close)

    # -- header

    def header(self, summary: JaxprSummary) -> None:
        def row(label: str, *pieces: Piece) -> None:
            self.emit([(f"{label:<11}", LABEL), *pieces])

        def avals(items: tuple[AvalRecord, ...]) -> Piece:
            return (", ".join(map(str, items)) or "()", TYPE)

        row("inputs", avals(summary.in_avals))
        row("outputs", avals(summary.out_avals))
        eqn_row: Line = [(str(summary.n_eqns), NUM), (" top-level", "")]
        if summary.n_subjaxprs:
            eqn_row += [
                (", ", ""),
                (str(summary.n_eqns_total), NUM),
                (" with nested (", ""),
                (str(summary.n_subjaxprs), NUM),
                (f" nested jaxpr{'s' if summary.n_subjaxprs != 1 else ''}, depth ", ""),
                (str(summary.max_depth), NUM),
                (")", ""),
            ]
        row("equations", *eqn_row)
        self.wrapped_row(
            "primitives",
            [(f"{p} ", PRIM) for p, _ in summary.primitive_counts],
            [str(n) for _, n in summary.primitive_counts],
        )
        consts = summary.constants
        if consts:
            row("constants", (str(len(consts)), NUM), (f" ({format_bytes(summary.const_bytes)})", ""))
            name_w = max(len(c.name) for c in consts)
            type_w = max(len(str(c.aval)) for c in consts)
            for c in consts:
                self.emit(
                    [
                        ("  ", ""),
                        (f"{c.name:<{name_w}}", LIT if c.literal else VAR),
                        ("  ", ""),
                        (f"{c.aval!s:<{type_w}}", TYPE),
                        ("  ", ""),
                        (f"{format_bytes(c.nbytes):>9}", NUM),
                        ("  ", ""),
                        (c.origin, MUTED if c.origin == "unknown" else ""),
                    ]
                )
        else:
            row("constants", ("none", MUTED))
        row("effects", (", ".join(summary.effects), "") if summary.effects else ("none", MUTED))
        self.emit([])

    def wrapped_row(self, label: str, names: list[Piece], counts: list[str]) -> None:
        """``label  add 3, mul 2, ...`` wrapped at the header width, continuing under the first item."""
        line: Line = [(f"{label:<11}", LABEL)]
        width = 11
        if not names:
            line.append(("none", MUTED))
        for i, (piece, count) in enumerate(zip(names, counts, strict=True)):
            item_w = len(piece[0]) + len(count)
            if i:
                # The comma stays on the line it ends; the next item may start a new one.
                line.append((",", ""))
                width += 1
                if width + 1 + item_w > self.width:
                    self.emit(line)
                    line, width = [(" " * 11, "")], 11
                else:
                    line.append((" ", ""))
                    width += 1
            line += [piece, (count, NUM)]
            width += item_w
        self.emit(line)

    # -- output

    def annotated(self) -> Iterator[Line]:
        """Lines with their locations appended, aligned on one column that fits the width."""
        lines, locations = self.lines, self.locations
        if not any(locations):
            yield from lines
            return
        widths = [
            sum(len(t) for t, _ in line) if loc else 0 for line, loc in zip(lines, locations, strict=True)
        ]
        longest_location = max(len(loc) for loc in locations)
        column = max(min(max(widths), MAX_LOCATION_COLUMN, self.width - longest_location - 2), 0)
        for line, loc, width in zip(lines, locations, widths, strict=True):
            if loc:
                yield [*line, (" " * max(column - width, 0) + "  ", ""), (loc, LOC)]
            else:
                yield line


def layout_jaxpr(
    record: JaxprRecord,
    summary: JaxprSummary | None = None,
    options: JaxprRenderOptions | None = None,
    width: int = TEXT_WIDTH,
) -> list[Line]:
    """The rendering as lines of ``(text, style name)`` pieces (header only if ``summary`` is given).

    ``width`` is where the header wraps and the location column must end; equation lines
    themselves are never broken (a viewer or terminal can fold them).
    """
    opts = options or JaxprRenderOptions()
    layout = _Layout(opts, width)
    if opts.header and summary is not None:
        layout.header(summary)
    layout.shared_definitions(record)
    layout.jaxpr(record, "", [], 0)
    return list(layout.annotated())


def render_jaxpr_text(
    record: JaxprRecord,
    summary: JaxprSummary | None = None,
    *,
    locations: bool = True,
    depth: int | None = None,
    header: bool = True,
) -> str:
    """Plain text (for ``--out`` files, pipes and tests), ending in a newline."""
    lines = layout_jaxpr(record, summary, JaxprRenderOptions(locations, depth, header))
    return "\n".join(["".join([t for t, _ in line]) for line in lines]) + "\n"


@dataclass(frozen=True, slots=True)
class JaxprView:
    """A rich renderable for a jaxpr; build it with ``render_jaxpr``."""

    record: JaxprRecord
    summary: JaxprSummary | None = None
    options: JaxprRenderOptions = JaxprRenderOptions()

    def lines(self, width: int = TEXT_WIDTH) -> list[Line]:
        return layout_jaxpr(self.record, self.summary, self.options, width)

    def to_text(self) -> Text:
        """The whole rendering as one styled ``Text`` (convenient, but slow to wrap when huge)."""
        parts: list[str] = []
        spans: list[Span] = []
        pos = 0
        for i, line in enumerate(self.lines()):
            if i:
                parts.append("\n")
                pos += 1
            for text, style in line:
                end = pos + len(text)
                if style:
                    spans.append(Span(pos, end, style))
                parts.append(text)
                pos = end
        return Text("".join(parts), spans=spans, no_wrap=True, overflow="ignore")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        styles: dict[str, Style] = {}
        width = options.max_width
        fold = not options.no_wrap
        newline = Segment.line()
        for line in self.lines(width):
            if fold and sum(len(t) for t, _ in line) > width:
                yield from console.render(_line_text(line), options)
                continue
            for text, name in line:
                style = styles.get(name)
                if style is None:
                    style = styles[name] = console.get_style(name) if name else Style.null()
                yield Segment(text, style)
            yield newline


def _line_text(line: Line) -> Text:
    text = Text(no_wrap=False, overflow="fold")
    for piece, style in line:
        text.append(piece, style or None)
    return text


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
