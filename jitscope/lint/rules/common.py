"""Helpers the rules share: name resolution inside a traced function, object origins, messages."""

from __future__ import annotations

import ast
from typing import Literal

from jitscope.lint.analysis.qualified_names import last_name
from jitscope.lint.analysis.taint import CONTAINER, FRESH, FunctionFacts
from jitscope.lint.analysis.taint_calls import MUTATORS
from jitscope.lint.rule import ModuleContext

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
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}


_REF_SUFFIXES = ("ref", "_smem", "_vmem", "_hbm", "scratch", "_sem", "_buf", "_buffer")
_REF_MODULES = ("jax.experimental.pallas", "jax._src.pallas")
_REF_MAKERS = ("new_ref(", "mutable_array(", "array_ref(", "empty_ref(")


def uses_refs(ctx: ModuleContext) -> bool:
    """True for modules that write to mutable refs (Pallas kernels, ``jax.new_ref``)."""
    cached = ctx.memo.get("uses_refs")
    if cached is None:
        aliases = ctx.index.names.aliases.values()
        text = ctx.index.parsed.text
        cached = any(q.startswith(_REF_MODULES) for q in aliases) or any(m in text for m in _REF_MAKERS)
        ctx.memo["uses_refs"] = cached
    return bool(cached)


def is_ref_write(ctx: ModuleContext, target: ast.Subscript) -> bool:
    """``o_ref[...] = v``: a write to a mutable ref, which is how Pallas kernels and jax refs work."""
    index = target.slice
    if isinstance(index, ast.Constant) and index.value is Ellipsis:
        return True
    root = root_name(target)
    if root is not None and root.id.lower().endswith(_REF_SUFFIXES):
        return True
    return uses_refs(ctx)


#: list methods: their name alone says the receiver is a list
LIST_MUTATORS = frozenset({"append", "extend", "insert", "appendleft", "extendleft"})
_CONTAINER_MAKERS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "Counter"})


def known_container(ctx: ModuleContext, facts: FunctionFacts, node: ast.expr) -> bool:
    """True when ``node`` is known to be a Python list/dict/set (so ``.update()`` mutates it)."""
    if facts.flags_of(node) & CONTAINER:
        return True
    if isinstance(node, ast.Name):
        if facts.closure.get(node.id, 0) & CONTAINER:
            return True
        if node.id not in facts.local_names and node.id not in facts.closure:
            value = ctx.index.module_values.get(node.id)
            if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
                return True
            if isinstance(value, ast.Call):
                return last_name(value.func) in _CONTAINER_MAKERS
    return False


def mutates(ctx: ModuleContext, facts: FunctionFacts, call: ast.Call) -> bool:
    """``x.append(v)`` always mutates; ``x.update(v)``/``x.pop()``/... only when ``x`` is a known container
    (``optimizer.update(...)`` is a functional API, not a dict update)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in MUTATORS:
        return False
    return func.attr in LIST_MUTATORS or known_container(ctx, facts, func.value)


def traced_because(facts: FunctionFacts) -> str:
    """``(traced: decorated with @jax.jit)`` -- why the function counts as traced."""
    return f" (`{facts.qualname}` is traced: {facts.reason})" if facts.reason else ""


def label(node: ast.expr) -> str:
    """Short source text for a node, for messages."""
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."
