"""Highlighters for StableHLO (MLIR text) and compiled HLO text; pygments has no lexer for either.

Each highlighter is a rich ``RegexHighlighter``: the named group of each pattern is the
style's suffix (``(?P<op>...)`` -> ``hlo.op``). Later patterns paint over earlier ones, so
after the regexes run, any span inside a comment (``loc(...)``, ``metadata={...}``, ``//``),
a string or a type is dropped: a number inside ``loc("model.py":12:3)`` must look like the
rest of the location, not like an operand.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable
from typing import Literal

from rich.highlighter import RegexHighlighter
from rich.text import Span, Text

IrDialect = Literal["stablehlo", "hlo", "auto"]

# One level of nested parentheses and quoted strings: loc("jit(f)/add"(#loc18)), loc(callsite(#a at #b)).
_LOC = r'\bloc\((?:[^()"]|"[^"]*"|\((?:[^()"]|"[^"]*")*\))*\)'
_NUMBER = r"(?<![\w%#.@$-])(?P<number>-?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))\b"


class _IrHighlighter(RegexHighlighter):
    base_style = "hlo."

    def highlight(self, text: Text) -> None:
        before = len(text.spans)
        super().highlight(text)
        text.spans = text.spans[:before] + _drop_nested(text.spans[before:])


def _covers(spans: list[Span], style: str) -> Callable[[int, int], bool]:
    """A test: does some span of ``style`` contain [start, end)?"""
    intervals = sorted((s.start, s.end) for s in spans if s.style == style)
    starts = [start for start, _ in intervals]
    reach = list(itertools.accumulate((end for _, end in intervals), max))

    def covered(start: int, end: int) -> bool:
        i = bisect.bisect_right(starts, start) - 1
        return i >= 0 and reach[i] >= end

    return covered


def _drop_nested(spans: list[Span]) -> list[Span]:
    """Remove spans inside a comment, a string or a type (the digits of ``f32[2,3]``)."""
    in_comment = _covers(spans, "hlo.comment")
    in_other = _covers(spans, "hlo.string"), _covers(spans, "hlo.type")
    kept = []
    comment_reach = -1
    # Comments by position, outer first, so a loc(...) inside a `#loc = loc(...)` line is dropped.
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if span.style == "hlo.comment":
            if span.end > comment_reach:
                kept.append(span)
                comment_reach = span.end
        elif in_comment(span.start, span.end):
            continue
        elif span.style in ("hlo.string", "hlo.type") or not any(c(span.start, span.end) for c in in_other):
            kept.append(span)
    return kept


class StableHloHighlighter(_IrHighlighter):
    """StableHLO / MLIR: ``%0 = stablehlo.add %arg0, %cst : tensor<2xf32> loc(#loc3)``."""

    highlights = [  # noqa: RUF012 - rich's API is a class attribute list
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
    ]


class HloHighlighter(_IrHighlighter):
    """Compiled HLO text: ``%add.1 = f32[2]{0} add(%x, %y), metadata={op_name="jit(f)/add"}``."""

    highlights = [  # noqa: RUF012 - rich's API is a class attribute list
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
    ]


STABLEHLO_HIGHLIGHTER = StableHloHighlighter()
HLO_HIGHLIGHTER = HloHighlighter()


def detect_dialect(ir: str) -> Literal["stablehlo", "hlo"]:
    """``hlo`` for XLA's HLO text (``HloModule ...``), else ``stablehlo``."""
    return "hlo" if ir.lstrip().startswith("HloModule") else "stablehlo"


def highlight_ir(ir: str, dialect: IrDialect = "auto") -> Text:
    """A highlighted, non-wrapping ``Text`` for StableHLO or HLO text."""
    kind = detect_dialect(ir) if dialect == "auto" else dialect
    text = Text(ir, no_wrap=True, overflow="ignore", end="")
    (HLO_HIGHLIGHTER if kind == "hlo" else STABLEHLO_HIGHLIGHTER).highlight(text)
    return text
