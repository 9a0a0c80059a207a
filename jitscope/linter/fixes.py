"""Safe fixes: the rewrites ``jitscope lint --fix`` applies, and the API editors use.

Some rules know a mechanical rewrite that removes their finding: JS101 ``print(...)`` ->
``jax.debug.print(...)``, JS201 a Python ``if``/ternary on a traced value -> ``jnp.where``, JS204
``x[i] = v`` -> ``x = x.at[i].set(v)``. A rule offers one only where the rewrite is *safe*: on every
input where the original code does what it says (read with NumPy's semantics, eagerly), the rewritten
code computes the same values, and it also works under ``jax.jit``. Where a shape of code is close
but not provably the same (the branches of an ``if`` may differ in dtype, the array may have another
name), there is no fix and the finding's suggestion says why, briefly. Each rule's ``fix`` method
holds its conditions; the README lists them.

For editors (``jitscope lsp``) and scripts, the API is two functions over plain records
(:class:`~jitscope.model.lint.Edit`, :class:`~jitscope.model.lint.Fix`)::

    from jitscope.linter.fixes import apply_edits, fixes_for

    for fix in fixes_for(finding, source):          # the finding's fixes in this text (0 or 1)
        new_source = apply_edits(source, fix.edits)  # one fix's edits, applied together

``fixes_for(finding, source, path=None)`` lints ``source`` as the module ``path`` (default: the
finding's file) with the finding's rule and returns the fix of the finding at the same place, found
by the rule's own analysis (an empty list when the text changed under it or the shape is unsafe). A
finding from ``jitscope lint`` (or ``--format json``: the ``fix`` member) already carries its fix as
``finding.fix``; ``fixes_for`` is for text that changed since, such as an editor's unsaved buffer.
It sees one module, so a finding that only cross-module analysis produces has no fix there.

Positions are 1-based lines and 1-based *character* columns, the end exclusive, as in findings
(an LSP client counts UTF-16 units from 0: convert at the edge). ``apply_edits`` splits lines as
the interpreter does (``\\r\\n``, ``\\r``, ``\\n``), writes new lines in the text's own style and
raises ``ValueError`` on overlapping edits. :func:`apply_fixes` applies several fixes to one text,
skipping any that overlaps one already taken (a later round picks it up again).

Rules build their fixes with :mod:`jitscope.linter.fix_builder`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from jitscope.linter.fix_builder import line_starts as _line_starts
from jitscope.model.lint import Edit, Finding, Fix

__all__ = ["Edit", "Fix", "apply_edits", "apply_fixes", "fixes_for"]

# -- the API ----------------------------------------------------------------------------------------


def fixes_for(finding: Finding, source: str, path: str | None = None) -> list[Fix]:
    """The safe fixes of ``finding`` in ``source`` (the text of the module ``path``, default the finding's
    file): the rule re-checks the text and the fix of its finding at the same place is returned."""
    from jitscope.linter.engine import lint_source

    for found in lint_source(source, path or finding.file, select=[finding.code]):
        if (found.code, found.line, found.column, found.end_line, found.end_column) == (
            finding.code, finding.line, finding.column, finding.end_line, finding.end_column
        ) and found.fix is not None:
            return [found.fix]
    return []


def apply_edits(source: str, edits: Iterable[Edit]) -> str:
    """``source`` with ``edits`` applied (positions refer to ``source`` before any edit)."""
    starts = _line_starts(source)
    newline = _newline_of(source)
    spans = sorted(((_offset(starts, source, e.line, e.column), _offset(starts, source, e.end_line, e.end_column),
                     e.text) for e in set(edits)), key=lambda s: (s[0], s[1], s[2]))
    out: list[str] = []
    at = 0
    for start, end, text in spans:
        if end < start or start < at:
            raise ValueError("overlapping or reversed edits")
        out.append(source[at:start])
        out.append(text.replace("\n", newline) if newline != "\n" else text)
        at = end
    out.append(source[at:])
    return "".join(out)


def apply_fixes(source: str, fixes: Sequence[Fix]) -> tuple[str, int]:
    """``source`` with as many of ``fixes`` as do not overlap (in order, whole fixes only), and how many
    were applied. Identical edits (two fixes adding the same import) are made once."""
    starts = _line_starts(source)
    taken: list[tuple[int, int]] = []
    edits: set[Edit] = set()
    applied = 0
    for fix in fixes:
        spans = [(_offset(starts, source, e.line, e.column), _offset(starts, source, e.end_line, e.end_column), e)
                 for e in fix.edits]
        if any(e not in edits and any(_conflict((s, t), other) for other in taken) for s, t, e in spans):
            continue
        for s, t, e in spans:
            if e not in edits:
                edits.add(e)
                taken.append((s, t))
        applied += 1
    return (apply_edits(source, edits) if edits else source), applied


def _conflict(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Two spans overlap, one insertion falls inside the other span, or both insert at one place."""
    return (a[0] < b[1] and b[0] < a[1]) or a[0] == a[1] == b[0] == b[1]


def _newline_of(source: str) -> str:
    m = re.search(r"\r\n|\r|\n", source)
    return m.group() if m else "\n"


def _offset(starts: list[int], source: str, line: int, column: int) -> int:
    if not 1 <= line <= len(starts):
        raise ValueError(f"line {line} is outside the text ({len(starts) - 1} lines)")
    offset = starts[line - 1] + column - 1
    limit = starts[line] if line < len(starts) else len(source)
    if column < 1 or offset > limit:
        raise ValueError(f"column {column} is outside line {line}")
    return offset
