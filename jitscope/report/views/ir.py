"""Highlighters for StableHLO (MLIR text) and compiled HLO text; pygments has no lexer for either.

Each highlighter works like a rich ``RegexHighlighter`` (``highlight(text)`` adds spans to a ``Text``): the
named group of each pattern is the style's suffix (``(?P<op>...)`` -> ``hlo.op``). After the regexes run, any
span inside a comment (``loc(...)``, ``metadata={...}``, ``//``), a string or a type is dropped: a number inside
``loc("model.py":12:3)`` must look like the rest of the location, not like an operand.

Neither rich nor the patterns are loaded on import: piped and plain text never highlight (``IrView``), and
``jitscope trace`` imports this module on every start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from jitscope.report.views.lines import Line, StyledLines

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.measure import Measurement
    from rich.text import Span, Text

IrDialect = Literal["stablehlo", "hlo", "auto"]

# One level of nested parentheses and quoted strings: loc("jit(f)/add"(#loc18)), loc(callsite(#a at #b)).
_LOC = r'\bloc\((?:[^()"]|"[^"]*"|\((?:[^()"]|"[^"]*")*\))*\)'
_NUMBER = r"(?<![\w%#.@$-])(?P<number>-?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))\b"


class _IrHighlighter:
    """A regex highlighter whose patterns each have one named group, run without rich's per-match
    bookkeeping (a 20,000-line HLO module has ~200,000 matches). Patterns compile on first use."""

    base_style = "hlo."
    highlights: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self._compiled: list[tuple[re.Pattern[str], str]] | None = None

    @property
    def compiled(self) -> list[tuple[re.Pattern[str], str]]:
        if self._compiled is None:
            self._compiled = [(pattern, self.base_style + next(iter(pattern.groupindex)))
                              for pattern in map(re.compile, self.highlights)]
        return self._compiled

    def highlight(self, text: Text) -> None:
        from rich.text import Span

        plain = text.plain
        found = [
            Span(start, end, style)
            for pattern, style in self.compiled
            for start, end in (m.span(1) for m in pattern.finditer(plain))
            if end > start
        ]
        text.spans = text.spans + _drop_nested(found)


_CONTAINERS = frozenset({"hlo.string", "hlo.type"})


def _drop_nested(spans: list[Span]) -> list[Span]:
    """Drop spans inside a comment, a string or a type (the digits of ``f32[2,3]``), in one sweep.

    Sorted by start, outer first: a span is inside an earlier container exactly when it ends
    before the furthest end reached by the containers seen so far.
    """
    kept = []
    comment_reach = container_reach = -1
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if span.end <= comment_reach:
            continue  # inside a comment (a loc(...) inside a `#loc = loc(...)` line too)
        style = span.style
        if style == "hlo.comment":
            comment_reach = span.end
        elif style in _CONTAINERS:
            container_reach = max(container_reach, span.end)
        elif span.end <= container_reach:
            continue
        kept.append(span)
    return kept


class StableHloHighlighter(_IrHighlighter):
    """StableHLO / MLIR: ``%0 = stablehlo.add %arg0, %cst : tensor<2xf32> loc(#loc3)``."""

    highlights: ClassVar[tuple[str, ...]] = (
        _NUMBER,
        r"(?P<type>\b(?:tensor|tuple|complex|memref|vector)<[^<>]*(?:<[^<>]*>[^<>]*)*>)",
        r"(?P<type>![\w.]+(?:<[^<>]*>)?)",
        r"(?<=: )(?P<type>\b(?:[isu]\d+|f\d+|bf16|index)\b)",
        r"(?<![%@\w.$#])(?P<attr>[a-zA-Z_][\w.]*)(?= = )",
        r"(?P<attr>\b(?:dense|array|dense_resource)(?=<))",
        # An op: a dialect-qualified name that is not an attribute key (possessive: no backtracking).
        r"(?P<op>\b[a-z_]+\.[\w.]++)(?!\s*=)",
        r"(?P<op>(?<![\w.%])(?:module|return)\b)",
        r"(?P<value>[%@][\w$.\-]+(?:#\d+)?)",
        r'(?P<string>"(?:[^"\\]|\\.)*")',
        rf"(?P<comment>{_LOC})",
        r"(?m)(?P<comment>^#loc\w* = .*$)",
        r"(?m)(?P<comment>//.*$)",
    )


class HloHighlighter(_IrHighlighter):
    """Compiled HLO text: ``%add.1 = f32[2]{0} add(%x, %y), metadata={op_name="jit(f)/add"}``."""

    highlights: ClassVar[tuple[str, ...]] = (
        _NUMBER,
        r"(?P<type>\b(?:pred|token|bf16|[fsuc]\d+(?:e\d+m\d+\w*)?)\[[^\]]*\](?:\{[^}]*\})?)",
        r"(?<![%\w.])(?P<attr>[a-z_]\w*)(?==)",
        r"(?<=[\]})] )(?P<op>[a-z][\w-]*)(?=\()",
        r"(?P<op>\b(?:ENTRY|ROOT|HloModule)\b)",
        r"(?P<value>%[\w.\-]+)",
        r'(?P<string>"(?:[^"\\]|\\.)*")',
        r"(?P<comment>\bmetadata=\{[^}]*\})",
        r"(?P<comment>/\*[^*]*\*/)",
        r"(?m)(?P<comment>//.*$)",
    )


STABLEHLO_HIGHLIGHTER = StableHloHighlighter()
HLO_HIGHLIGHTER = HloHighlighter()


def detect_dialect(ir: str) -> Literal["stablehlo", "hlo"]:
    """``hlo`` for XLA's HLO text (``HloModule ...``), else ``stablehlo``."""
    return "hlo" if ir.lstrip().startswith("HloModule") else "stablehlo"


def highlight_ir(ir: str, dialect: IrDialect = "auto") -> Text:
    """A highlighted, non-wrapping ``Text`` for StableHLO or HLO text (one trailing newline dropped:
    the console adds its own)."""
    from rich.text import Text

    kind = detect_dialect(ir) if dialect == "auto" else dialect
    text = Text(ir.removesuffix("\n"), no_wrap=True, overflow="ignore")
    (HLO_HIGHLIGHTER if kind == "hlo" else STABLEHLO_HIGHLIGHTER).highlight(text)
    return text


def ir_lines(text: Text) -> list[Line]:
    """A highlighted ``Text`` as styled lines (overlapping spans clipped: the earlier one wins)."""
    plain = text.plain
    pieces: list[tuple[str, str]] = []
    pos = 0
    for span in sorted(text.spans, key=lambda s: (s.start, -s.end)):
        start, end = max(span.start, pos), span.end
        if end <= start:
            continue
        if start > pos:
            pieces.append((plain[pos:start], ""))
        pieces.append((plain[start:end], str(span.style)))
        pos = end
    pieces.append((plain[pos:], ""))
    lines: list[Line] = [[]]
    for piece, style in pieces:
        first, *rest = piece.split("\n")
        if first:
            lines[-1].append((first, style))
        for part in rest:
            lines.append([(part, style)] if part else [])
    return lines


@dataclass(frozen=True, slots=True)
class IrView:
    """StableHLO or HLO text as a renderable, highlighted only when the console shows colour.

    Highlighting a large module is most of the cost of printing it; piped or NO_COLOR output
    would drop the styles anyway, so there the text goes out as plain lines.
    """

    ir: str
    dialect: IrDialect = "auto"

    def styled(self, colour: bool = True) -> StyledLines:
        if not colour:
            return StyledLines([[(line, "")] if line else [] for line in self.ir.removesuffix("\n").split("\n")])
        return StyledLines(ir_lines(highlight_ir(self.ir, self.dialect)))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.styled(not (console.no_color or console.color_system is None))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return self.styled(False).__rich_measure__(console, options)


def render_ir(ir: str, dialect: IrDialect = "auto") -> IrView:
    """A renderable for StableHLO or HLO text: same styles as ``highlight_ir``, but printed as
    segments, which is many times faster than a big ``Text`` for a large module."""
    return IrView(ir, dialect)
