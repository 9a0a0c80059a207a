"""Loops over the keys of a dict: the keys are Python values (strings, ints), never traced.

``for name in sorted(grads): total += weights[name] * grads[name]`` iterates the keys of a dict whose
values are traced; ``name`` is a string, so ``weights[name]`` is an ordinary lookup. The taint pass
asks :func:`iterates_keys` before it gives a loop variable the flags of the iterable's contents.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from jitscope.linter.analysis.module_index import FuncNode, target_names
from jitscope.linter.analysis.qualified_names import last_name

#: builtins that keep the elements of what they are given (``sorted(d)`` is the keys of ``d``)
_SAME_ELEMENTS = frozenset({"sorted", "list", "tuple", "reversed", "iter", "set", "frozenset"})

#: calls that build a mapping
_MAPPINGS = frozenset({"dict", "OrderedDict", "defaultdict", "FrozenDict", "freeze"})


def _mapping(node: ast.expr) -> bool:
    return isinstance(node, (ast.Dict, ast.DictComp)) or (
        isinstance(node, ast.Call) and last_name(node.func) in _MAPPINGS
    )


def _inner(iterable: ast.expr) -> ast.expr:
    """``sorted(list(d))`` -> ``d``."""
    while (
        isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Name)
        and iterable.func.id in _SAME_ELEMENTS
        and len(iterable.args) == 1
        and not isinstance(iterable.args[0], ast.Starred)
    ):
        iterable = iterable.args[0]
    return iterable


def dict_names(func: FuncNode) -> frozenset[str]:
    """Local names that every assignment in ``func`` binds to a mapping (``d = {}``, ``d = dict(a=x)``), and
    names bound once to a mapping's keys (``names = sorted(d)``)."""
    bindings: dict[str, list[ast.expr | None]] = {}  # name -> the values it is bound to (None: unknown)
    for node in ast.walk(func):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            single = len(targets) == 1 and isinstance(targets[0], ast.Name)
            for target in targets:
                for name in target_names(target):
                    bindings.setdefault(name, []).append(node.value if single else None)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
            for name in target_names(node.target):
                bindings.setdefault(name, []).append(None)
        elif isinstance(node, ast.arg):
            bindings.setdefault(node.arg, []).append(None)
    mappings = frozenset(
        name for name, values in bindings.items() if all(v is not None and _mapping(v) for v in values)
    )
    key_lists = {
        name
        for name, values in bindings.items()
        if len(values) == 1
        and (value := values[0]) is not None
        and _inner(value) is not value
        and iterates_keys(value, mappings)
    }
    return mappings | key_lists


def iterates_keys(
    iterable: ast.expr,
    mappings: frozenset[str],
    body: Sequence[ast.AST] | None = None,
    target: ast.expr | None = None,
) -> bool:
    """Iterating ``iterable`` gives the keys of a mapping: a dict built here (``sorted(d)``, ``d = {...}``),
    ``d.keys()``, or (for a loop ``body``) a name the body looks up with the loop ``target``
    (``for k in tree: tree[k]``: only a mapping is indexed by its own items; ``body``: a loop's statements or
    a comprehension's parts)."""
    inner = _inner(iterable)
    if _mapping(inner):
        return True
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "keys":
        return not inner.args
    if not isinstance(inner, ast.Name):
        return False
    if inner.id in mappings:
        return True
    if body is None or not isinstance(target, ast.Name):
        return False
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == inner.id
            and isinstance(node.slice, ast.Name)
            and node.slice.id == target.id
        ):
            return True
    return False
