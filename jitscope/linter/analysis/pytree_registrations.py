"""Fields that custom pytree registrations keep out of the leaves (in the treedef, so static).

JAX keeps a registered class's auxiliary data in the tree structure: it is a Python value
inside traced code, never a tracer. Three ways to register are read here:

- ``@register_pytree_node_class`` with a ``tree_flatten`` method returning ``(children, aux)``:
  the ``self.<attr>`` in ``aux`` are static;
- ``register_pytree_node(Cls, flatten, unflatten)`` (and ``register_pytree_with_keys``) with a
  module-level ``flatten`` function or lambda: the ``<param>.<attr>`` in the second element it returns;
- ``register_dataclass(Cls, data_fields=..., meta_fields=[...])`` as a call or (through
  ``functools.partial``) a decorator: the names in ``meta_fields``.
"""

from __future__ import annotations

import ast

from jitscope.linter.analysis.qualified_names import last_name

_NODE_CLASS = "register_pytree_node_class"
_NODE = frozenset({"register_pytree_node", "register_pytree_with_keys", "register_static"})
_DATACLASS = "register_dataclass"


def registered_static_fields(tree: ast.Module) -> set[str]:
    """Attribute names kept static by the pytree registrations of one module's top level."""
    found: set[str] = set()
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda] = {}
    calls: list[ast.Call] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    functions[target.id] = stmt.value
        elif isinstance(stmt, ast.ClassDef):
            found.update(_class_static_fields(stmt))
        elif isinstance(stmt, (ast.Expr, ast.Assign)) and isinstance(stmt.value, ast.Call):
            calls.append(stmt.value)
    for call in calls:
        name = last_name(call.func)
        if name == _DATACLASS:
            found.update(_meta_fields(call))
        elif name in _NODE and len(call.args) >= 2:
            flatten = call.args[1]
            func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None = None
            if isinstance(flatten, ast.Lambda):
                func = flatten
            elif isinstance(flatten, ast.Name):
                func = functions.get(flatten.id)
            if func is not None:
                found.update(_aux_attributes(func))
    return found


def _class_static_fields(cls: ast.ClassDef) -> set[str]:
    found: set[str] = set()
    for dec in cls.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = last_name(target)
        if name == _NODE_CLASS:
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in (
                    "tree_flatten",
                    "tree_flatten_with_keys",
                ):
                    found.update(_aux_attributes(stmt))
        elif isinstance(dec, ast.Call) and (
            name == _DATACLASS or (name == "partial" and dec.args and last_name(dec.args[0]) == _DATACLASS)
        ):
            found.update(_meta_fields(dec))
    return found


def _meta_fields(call: ast.Call) -> set[str]:
    for keyword in call.keywords:
        if keyword.arg == "meta_fields" and isinstance(keyword.value, (ast.List, ast.Tuple, ast.Set)):
            return {
                e.value
                for e in keyword.value.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            }
    return set()


def _aux_attributes(func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """``<first param>.<attr>`` read in the auxiliary part of what a flatten function returns."""
    params = func.args.posonlyargs + func.args.args
    if not params:
        return set()
    me = params[0].arg
    local: dict[str, ast.expr] = {}
    returns: list[ast.expr] = []
    if isinstance(func, ast.Lambda):
        returns.append(func.body)
    else:
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                local[node.targets[0].id] = node.value
            elif isinstance(node, ast.Return) and node.value is not None:
                returns.append(node.value)
    found: set[str] = set()
    for value in returns:
        if not (isinstance(value, ast.Tuple) and len(value.elts) == 2):
            continue
        aux = value.elts[1]
        if isinstance(aux, ast.Name) and aux.id in local:
            aux = local[aux.id]
        for sub in ast.walk(aux):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == me:
                found.add(sub.attr)
    return found
