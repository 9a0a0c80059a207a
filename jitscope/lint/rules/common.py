"""Helpers the rules share: name resolution inside a traced function, object origins, messages."""

from __future__ import annotations

import ast
from typing import Literal

from jitscope.lint.rule import ModuleContext
from jitscope.lint.taint import FRESH, FunctionFacts

Origin = Literal["self", "param", "fresh", "alias", "closure", "closure-fresh", "module", "global", "other"]


def qualify(ctx: ModuleContext, facts: FunctionFacts, node: ast.expr) -> str | None:
    """Qualified name of an imported thing (``np.random.rand`` -> ``numpy.random.rand``)."""
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    if root.id in facts.local_aliases:
        return ctx.index.names.qualify(node, facts.local_aliases)
    if root.id in facts.local_names or root.id in facts.closure or root.id in facts.comp_names:
        return None
    return ctx.index.names.qualify(node)


def is_builtin(ctx: ModuleContext, facts: FunctionFacts, name: str) -> bool:
    """True when ``name`` refers to the builtin of that name (not shadowed anywhere visible)."""
    return not (
        name in facts.local_names
        or name in facts.closure
        or name in facts.comp_names
        or name in facts.local_aliases
        or name in ctx.index.module_values
        or name in ctx.index.names.aliases
    )


def root_name(node: ast.expr) -> ast.Name | None:
    """The name at the root of ``a.b[c].d``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def origin(ctx: ModuleContext, facts: FunctionFacts, node: ast.expr) -> Origin:
    """Where the object ``node`` refers to comes from, as far as this function can tell."""
    root = root_name(node)
    if root is None:
        return "other"
    name = root.id
    if facts.self_name is not None and name == facts.self_name:
        return "self"
    if name in facts.comp_names:
        return "other"
    flags = facts.flags_of(root)
    if name in _param_names(facts):
        return "fresh" if flags & FRESH else "param"
    if name in facts.local_names:
        return "fresh" if flags & FRESH else "alias"
    if name in facts.closure:
        return "closure-fresh" if facts.closure[name] & FRESH else "closure"
    if name in ctx.index.names.module_aliases or name in facts.local_aliases:
        return "module"
    if name in ctx.index.names.aliases:
        return "other"
    return "global"


def _param_names(facts: FunctionFacts) -> set[str]:
    args = facts.func.args
    out = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    return out


def traced_because(facts: FunctionFacts) -> str:
    """``(traced: decorated with @jax.jit)`` -- why the function counts as traced."""
    return f" (`{facts.qualname}` is traced: {facts.reason})" if facts.reason else ""


def label(node: ast.expr) -> str:
    """Short source text for a node, for messages."""
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every expression
        return "expression"
    return text if len(text) <= 40 else text[:37] + "..."
