"""What rules use to build their fixes (see :mod:`jitscope.linter.fixes` for what a fix is and the API).

Positions come from the AST (UTF-8 byte columns) and are turned into the findings' convention:
1-based lines, 1-based character columns, the end exclusive. Text is taken from the module exactly
as written (``segment`` refuses a node whose text does not parse back to it), imports are found or
added (``module_alias``), and ``attach_fix`` asks a fixable rule for the fix of each finding it made.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jitscope.model.lint import Edit, Finding, Fix

if TYPE_CHECKING:
    from jitscope.linter.context import ModuleContext, TracedFunction
    from jitscope.linter.rule import Rule

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")


def line_starts(source: str) -> list[int]:
    """The offset where each line starts (lines end at ``\\r\\n``, ``\\r`` or ``\\n``), and one past the end."""
    starts = [0]
    for m in _LINE.finditer(source):
        if m.end() == m.start():
            break
        starts.append(m.end())
    return starts


def span(ctx: ModuleContext, node: ast.AST) -> tuple[int, int, int, int]:
    """``node``'s (line, column, end_line, end_column): 1-based, character columns, end exclusive."""
    line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
    return (line, ctx.char_column(line, node.col_offset) + 1,  # type: ignore[attr-defined]
            end_line, ctx.char_column(end_line, node.end_col_offset or 0) + 1)  # type: ignore[attr-defined]


def replace(ctx: ModuleContext, node: ast.AST, text: str) -> Edit:
    """An edit replacing ``node``'s source text."""
    return Edit(*span(ctx, node), text)


def replace_between(ctx: ModuleContext, first: ast.AST, last: ast.AST, text: str) -> Edit:
    """An edit replacing the source from ``first``'s start to ``last``'s end."""
    a, b = span(ctx, first), span(ctx, last)
    return Edit(a[0], a[1], b[2], b[3], text)


def text_between(ctx: ModuleContext, start: tuple[int, int], end: tuple[int, int]) -> str:
    """The source from (line, char column) to (line, char column), both 1-based, end exclusive."""
    (line, col), (end_line, end_col) = start, end
    lines = ctx.lines
    if line == end_line:
        return lines[line - 1][col - 1:end_col - 1]
    return "\n".join([lines[line - 1][col - 1:], *lines[line:end_line - 1], lines[end_line - 1][:end_col - 1]])


def segment(ctx: ModuleContext, node: ast.AST) -> str | None:
    """``node``'s source text, or None when it does not parse back to ``node`` (positions inside f-strings
    differ between Python versions: a fix never guesses)."""
    line, col, end_line, end_col = span(ctx, node)
    text = text_between(ctx, (line, col), (end_line, end_col))
    try:
        back = ast.parse(f"(\n{text}\n)", mode="eval").body
    except SyntaxError:
        return None
    return text if ast.dump(back) == ast.dump(node) else None


def has_comment(ctx: ModuleContext, outer: ast.AST, keep: Sequence[ast.AST], last: ast.AST | None = None) -> bool:
    """Whether the source of ``outer`` (to ``last``'s end) has a comment outside the ``keep`` nodes'
    text: a rewrite built from those nodes would drop it. The ``keep`` nodes hold no strings with ``#``
    outside their own text."""
    line, col, *_ = span(ctx, outer)
    *_, end_line, end_col = span(ctx, last or outer)
    text = text_between(ctx, (line, col), (end_line, end_col))
    starts = line_starts(text)
    for node in sorted(keep, key=lambda n: span(ctx, n)[:2], reverse=True):
        a, b, c, d = span(ctx, node)
        s = starts[a - line] + (b - col if a == line else b - 1)
        t = starts[c - line] + (d - col if c == line else d - 1)
        text = text[:s] + " " * (t - s) + text[t:]
    return "#" in text


def module_alias(ctx: ModuleContext, qualified: str, preferred: str,
                 facts: TracedFunction) -> tuple[str, tuple[Edit, ...]] | None:
    """A name that means the module ``qualified`` (``jax``, ``jax.numpy``) inside ``facts``'s function:
    a top-level import of it (``import jax.numpy as jnp``), or ``preferred`` with the edit that adds
    the import when that name is bound nowhere in the module. None when neither is safe."""
    bound = _bindings(ctx)
    for name, target in _top_level_imports(ctx).items():
        if target == qualified and bound.get(name) == {target} and name not in facts.local_names:
            return name, ()
    if preferred in bound or preferred in facts.local_names or preferred in facts.closure:
        return None
    statement = f"import {qualified}" + ("" if qualified == preferred else f" as {preferred}")
    return preferred, (_import_edit(ctx, statement),)


def _top_level_imports(ctx: ModuleContext) -> dict[str, str]:
    """Names bound by the module's top-level imports (not inside ``if``/``try``): name -> module."""
    found: dict[str, str] | None = ctx.memo.get("fix.imports")
    if found is None:
        found = {}
        for stmt in ctx.tree.body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                found.update(_imported(stmt))
        ctx.memo["fix.imports"] = found
    return found


def _imported(stmt: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """name -> what it is: ``import jax.numpy`` binds ``jax`` (the package), ``from jax import numpy as
    jnp`` binds ``jnp`` (``jax.numpy``); a relative import's names count as unknown."""
    if isinstance(stmt, ast.Import):
        return {(a.asname or a.name.partition(".")[0]): (a.name if a.asname else a.name.partition(".")[0])
                for a in stmt.names}
    module = "." * stmt.level + (stmt.module or "")
    return {(a.asname or a.name): f"{module}.{a.name}" for a in stmt.names}


def _bindings(ctx: ModuleContext) -> dict[str, set[str | None]]:
    """What each name is bound to anywhere in the module: the module an import binds it to, None for
    any other binding (an assignment, a parameter, a def)."""
    found: dict[str, set[str | None]] | None = ctx.memo.get("fix.bindings")
    if found is None:
        found = {}
        for node in ast.walk(ctx.tree):
            names: dict[str, str | None] = {}
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                names[node.id] = None
            elif isinstance(node, ast.arg):
                names[node.arg] = None
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names[node.name] = None
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names.update(_imported(node))
            elif isinstance(node, ast.Global | ast.Nonlocal):
                names.update(dict.fromkeys(node.names))
            elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
                names[node.name] = None
            for name, target in names.items():
                found.setdefault(name, set()).add(target)
        ctx.memo["fix.bindings"] = found
    return found


def _import_edit(ctx: ModuleContext, statement: str) -> Edit:
    """Insert ``statement`` after the module's leading imports (after its docstring and ``__future__``
    imports), or before its first statement."""
    body = ctx.tree.body
    first = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    last: ast.stmt | None = None
    for stmt in body[first:]:
        if not isinstance(stmt, ast.Import | ast.ImportFrom):
            break
        last = stmt
    if last is None and first < len(body):
        return Edit(body[first].lineno, 1, body[first].lineno, 1, statement + "\n")
    after = (last or body[0]).end_lineno if body else 0
    line = (after or 0) + 1
    if line <= len(ctx.lines) or (ctx.text.endswith("\n") and line == len(ctx.lines) + 1) or not ctx.lines:
        return Edit(line, 1, line, 1, statement + "\n")
    end = len(ctx.lines[-1]) + 1  # the last line has no newline: start one
    return Edit(len(ctx.lines), end, len(ctx.lines), end, "\n" + statement)


def attach_fix(ctx: ModuleContext, rule: Rule, finding: Finding) -> Finding:
    """``finding`` with the rule's fix, or with why there is none added to its suggestion."""
    if not rule.fixable or finding.fix is not None:
        return finding
    facts = next((f for f in ctx.functions if f.qualname == finding.function), None)
    if facts is None:
        return finding
    node = ctx.node_at(facts, finding)
    if node is None:
        return finding
    parents = _parents(ctx, facts)
    try:
        outcome = rule.fix(ctx, facts, node, parents)
    except (RecursionError, ValueError):
        return finding
    if isinstance(outcome, Fix):
        return dataclasses.replace(finding, fix=outcome)
    if isinstance(outcome, str):
        note = f"no automatic fix: {outcome}"
        suggestion = f"{finding.suggestion} ({note})" if finding.suggestion else note
        return dataclasses.replace(finding, suggestion=suggestion)
    return finding


def _parents(ctx: ModuleContext, facts: TracedFunction) -> dict[int, ast.AST]:
    key = f"fix.parents.{id(facts.func)}"
    found: dict[int, ast.AST] | None = ctx.memo.get(key)
    if found is None:
        found = {id(node): (parent if parent is not None else facts.func) for node, parent in ctx.body(facts)}
        ctx.memo[key] = found
    return found
