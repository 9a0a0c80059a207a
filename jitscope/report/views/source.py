"""Listings with link keys: the user's source lines a jaxpr came from, and StableHLO/HLO text."""

from __future__ import annotations

import os
from collections import defaultdict

from jitscope.model.jaxpr import JaxprRecord, distinct_eqns
from jitscope.report.views.document import CodeLine, CodeListing
from jitscope.report.views.ir import highlight_ir, ir_lines
from jitscope.report.views.links import hlo_line_links, src_key, stablehlo_func, stablehlo_line_links
from jitscope.userframes import read_source_lines

#: Source lines shown around the lines a jaxpr came from; gaps longer than GAP lines are elided.
CONTEXT = 2
GAP = 6


def jaxpr_source_lines(record: JaxprRecord) -> dict[str, set[int]]:
    """file -> the lines its equations (nested ones too) came from."""
    found: dict[str, set[int]] = defaultdict(set)
    for eqn in distinct_eqns(record):
        if eqn.location is not None:
            found[eqn.location.file].add(eqn.location.line)
    return found


def _ranges(lines: set[int], last: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for n in sorted(lines):
        lo, hi = max(1, n - CONTEXT), min(last, n + CONTEXT)
        if out and lo <= out[-1][1] + GAP:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def source_listings(record: JaxprRecord, id_prefix: str) -> list[CodeListing]:
    """One listing per source file, the lines the jaxpr came from marked, with a little context."""
    listings = []
    for i, (path, wanted) in enumerate(sorted(jaxpr_source_lines(record).items())):
        text = read_source_lines(path)
        if not text:
            continue
        lines: list[CodeLine] = []
        for j, (lo, hi) in enumerate(_ranges({n for n in wanted if n <= len(text)}, len(text))):
            if j:
                lines.append(CodeLine((("⋮", "jitscope.muted"),)))
            for n in range(lo, hi + 1):
                lines.append(CodeLine(((text[n - 1].rstrip().expandtabs(4), ""),), number=n,
                                      src=src_key(path, n), mark=n in wanted))
        listings.append(CodeListing(tuple(lines), "python", title=os.path.relpath(path) if os.path.isabs(path)
                                    else path, id=f"{id_prefix}{i + 1}"))
    return listings


def ir_listing(ir: str, language: str, linked: bool, id: str) -> CodeListing:
    """StableHLO or HLO text; ``linked`` highlights it here and gives each line its link keys and folds."""
    if not linked:
        return CodeListing((), language, id=id, raw=ir)
    styled = ir_lines(highlight_ir(ir, "hlo" if language == "hlo" else "stablehlo"))
    texts = ir.removesuffix("\n").split("\n")
    lines: list[CodeLine] = []
    func, top = "main", "main"
    for text, line in zip(texts, styled, strict=False):
        fold = unfold = 0
        if language == "hlo":
            op, src = hlo_line_links(text)
            if text.endswith("{") and not text.startswith((" ", "HloModule")):
                fold = 1
            elif text == "}":
                unfold = 1
        else:
            func = stablehlo_func(text) or func
            op, src = stablehlo_line_links(text, func, top)
            if text.lstrip().startswith("func.func") and text.endswith("{"):
                fold = 1
            elif text == "  }":
                unfold = 1
        lines.append(CodeLine(tuple(line), src=src, ops=(op,) if op else (), fold=fold, unfold=unfold))
    return CodeListing(tuple(lines), language, id=id, raw=ir)
