"""The summary block printed above a jaxpr: avals, equation counts, primitives, constants, effects.

::

    inputs     f32[8,128], f32[128]
    outputs    f32[8]
    equations  12 top-level, 20 with nested (2 nested jaxprs, depth 1)
    primitives add 4, mul 3, dot_general 1, ...
    constants  1 (512 B)
      a  f32[128]     512 B  closure variable `w` in model.py:12
    effects    none
"""

from __future__ import annotations

from jitscope.model.jaxpr import AvalRecord, JaxprSummary
from jitscope.report.views.lines import Line
from jitscope.units import fmt_bytes as format_bytes

LABEL = "jaxpr.label"
TYPE = "jaxpr.type"
PRIM = "jaxpr.primitive"
VAR = "jaxpr.var"
LIT = "jaxpr.literal"
NUM = "jitscope.number"
MUTED = "jitscope.muted"

#: Labels are padded to this width; continuation lines are indented by it.
LABEL_WIDTH = 11


def _plural(n: int, word: str) -> str:
    return f"{word}{'' if n == 1 else 's'}"


def _row(label: str, *pieces: tuple[str, str]) -> Line:
    return [(f"{label:<{LABEL_WIDTH}}", LABEL), *pieces]


#: An input or output list longer than this is counted, with its first few shown (a model's parameters).
MAX_AVALS = 12
SHOWN_AVALS = 4


def _avals(avals: tuple[AvalRecord, ...]) -> tuple[tuple[str, str], ...]:
    if not avals:
        return (("none", MUTED),)
    if len(avals) <= MAX_AVALS:
        return ((", ".join(map(str, avals)), TYPE),)
    nbytes = sum(a.nbytes or 0 for a in avals)
    return ((f"{len(avals)} arrays, {format_bytes(nbytes)}: ", ""),
            (", ".join(map(str, avals[:SHOWN_AVALS])), TYPE), (f", … +{len(avals) - SHOWN_AVALS}", MUTED))


def _wrapped_row(label: str, items: list[tuple[str, str]], width: int) -> list[Line]:
    """``label  add 3, mul 2, ...`` wrapped at ``width``, continuing under the first item."""
    lines: list[Line] = []
    line = _row(label)
    used = LABEL_WIDTH
    if not items:
        line.append(("none", MUTED))
    for i, (name, count) in enumerate(items):
        item_width = len(name) + 1 + len(count)
        if i:
            # The comma stays on the line it ends; the next item may start a new one.
            line.append((",", ""))
            used += 1
            if used + 1 + item_width > width:
                lines.append(line)
                line, used = [(" " * LABEL_WIDTH, "")], LABEL_WIDTH
            else:
                line.append((" ", ""))
                used += 1
        line += [(name, PRIM), (" ", ""), (count, NUM)]
        used += item_width
    lines.append(line)
    return lines


def layout_jaxpr_header(summary: JaxprSummary, width: int = 100) -> list[Line]:
    """The header as styled lines, ending with a blank line."""
    lines = [_row("inputs", *_avals(summary.in_avals)), _row("outputs", *_avals(summary.out_avals))]
    eqns = _row("equations", (str(summary.n_eqns), NUM), (" top-level", ""))
    if summary.n_subjaxprs:
        eqns += [
            (", ", ""),
            (str(summary.n_eqns_total), NUM),
            (" with nested (", ""),
            (str(summary.n_subjaxprs), NUM),
            (f" nested {_plural(summary.n_subjaxprs, 'jaxpr')}, depth ", ""),
            (str(summary.max_depth), NUM),
            (")", ""),
        ]
    lines.append(eqns)
    lines += _wrapped_row("primitives", [(p, str(n)) for p, n in summary.primitive_counts], width)
    consts = summary.constants
    if not consts:
        lines.append(_row("constants", ("none", MUTED)))
    else:
        lines.append(
            _row("constants", (str(len(consts)), NUM), (f" ({format_bytes(summary.const_bytes)})", ""))
        )
        name_w = max(len(c.name) for c in consts)
        type_w = max(len(str(c.aval)) for c in consts)
        for c in consts:
            lines.append(
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
    effects = (", ".join(summary.effects), "") if summary.effects else ("none", MUTED)
    lines.append(_row("effects", effects))
    lines.append([])
    return lines
