"""What a project's own types say about the values read from them.

Simulators and models keep their sizes in static fields and hand them out through small methods
(``sys.num_links()`` returning ``len(self.link_types)``); the taint pass reads those by name, as it
reads static fields. Found here, from one module's classes and top-level functions:

- helpers that declare a static field (``def static_field(): return field(metadata={"static": True})``,
  also any call named ``*static_field``), so ``n: int = static_field()`` is static;
- methods that take only ``self`` and return something static (``len(...)``, a static field, a shape,
  a constant, arithmetic of these) or an array (a ``jnp``/``lax`` call, an array method);
- fields annotated as arrays (``jax.Array``, ``jnp.ndarray``, ``Float[Array, "n"]``): reading one
  from a traced object gives a traced array.

And, for parameters, what an annotation says: ``str`` is never a JAX leaf, ``tuple[...]``/``list``/
``dict`` is a Python container (its truth is its emptiness), and a class that is not an array type is an
object whose fields may be leaves or static: what is read from it is traced, but not certainly an array.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Container, Iterable

from jitscope.linter.analysis.qualified_names import STATIC_ATTRS, last_name

#: names of annotations that hold arrays or leaves of unknown kind (a parameter keeps its flags)
_ARRAY_WORDS = (
    "Array", "ndarray", "Tensor", "Tracer", "Scalar", "Key", "PRNG", "Float", "Int", "Bool", "Num",
    "Shaped", "Real", "Complex", "Inexact", "Integer", "UInt", "PyTree", "Pytree", "Tree", "Params",
    "Any", "Variables", "Collection", "Leaf", "Number",
)
_CONTAINERS = frozenset(
    {"tuple", "Tuple", "list", "List", "Sequence", "dict", "Dict", "Mapping", "MutableMapping", "Iterable",
     "set", "Set", "frozenset", "FrozenSet", "MutableSequence"}
)
_STRINGS = frozenset({"str", "bytes"})


def _unwrap_optional(annotation: ast.expr) -> list[ast.expr]:
    """The alternatives of ``X | None`` / ``Optional[X]`` / ``Union[X, Y]`` (None dropped)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return []
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return [*_unwrap_optional(annotation.left), *_unwrap_optional(annotation.right)]
    if isinstance(annotation, ast.Subscript) and last_name(annotation.value) in ("Optional", "Union"):
        inner = annotation.slice
        items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        return [alt for item in items for alt in _unwrap_optional(item)]
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return []
    return [annotation]


def _kind_of(node: ast.expr) -> str:
    outer = node.value if isinstance(node, ast.Subscript) else node
    name = last_name(outer) or ""
    if name in _STRINGS:
        return "str"
    if name in _CONTAINERS:
        return "container"
    if not name[:1].isupper() or any(word in name for word in _ARRAY_WORDS):
        return "unknown"
    return "object"


def annotation_kind(annotation: ast.expr | None, known_classes: Container[str] = ()) -> str:
    """What a parameter's annotation says: "str", "container", "object" (a class that is not an array
    type and is not one of ``known_classes``, whose fields the analysis reads) or "unknown"."""
    if annotation is None:
        return "unknown"
    alternatives = _unwrap_optional(annotation)
    kinds = {_kind_of(alt) for alt in alternatives}
    if kinds == {"object"} and any(last_name(alt) in known_classes for alt in alternatives):
        return "unknown"
    return kinds.pop() if len(kinds) == 1 else "unknown"


def is_array_annotation(annotation: ast.expr) -> bool:
    """``jax.Array``, ``jnp.ndarray``, ``chex.Array``, ``Float[Array, "n"]``."""
    alternatives = _unwrap_optional(annotation)
    return bool(alternatives) and all(
        any(w in (last_name(alt.value if isinstance(alt, ast.Subscript) else alt) or "")
            for w in ("Array", "ndarray"))
        or (isinstance(alt, ast.Subscript) and "Array" in ast.unparse(alt.slice))
        for alt in alternatives
    )


def static_field_helpers(tree: ast.Module, is_static_field: Callable[[ast.expr | None], bool]) -> set[str]:
    """Top-level functions that return a static field (``return field(metadata={"static": True})``)."""
    found: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and "field" in stmt.name:
            returns = _returns(stmt)
            if returns and all(is_static_field(r) for r in returns):
                found.add(stmt.name)
    return found


def is_static_field_helper_call(value: ast.expr | None, helpers: Iterable[str]) -> bool:
    """``static_field()``, ``dataclasses.static_field()``, or a call of a helper found in this module."""
    if not isinstance(value, ast.Call):
        return False
    name = last_name(value.func) or ""
    return name.endswith("static_field") or name in helpers


def method_kinds(
    classes: Iterable[ast.ClassDef], static_fields: set[str], is_array_call: Callable[[ast.Call], bool]
) -> tuple[set[str], set[str]]:
    """(names of methods returning only static values, names of methods returning arrays), over the
    methods taking only ``self``; a name both static somewhere and an array elsewhere is neither."""
    static: set[str] = set()
    arrays: set[str] = set()
    for cls in classes:
        for stmt in cls.body:
            if not isinstance(stmt, ast.FunctionDef) or not _self_only(stmt):
                continue
            returns = _returns(stmt)
            if not returns:
                continue
            self_name = (*stmt.args.posonlyargs, *stmt.args.args)[0].arg
            if all(_static_expr(r, self_name, static_fields) for r in returns):
                static.add(stmt.name)
            elif any(_array_expr(r, is_array_call) for r in returns):
                arrays.add(stmt.name)
    both = static & arrays
    return static - both, arrays - both


def _returns(func: ast.FunctionDef) -> list[ast.expr]:
    """What a short accessor returns (``return len(self.link_types)``): the values of the ``return``
    statements at the top of a body of at most four statements (a docstring included); longer functions
    are not read (they are not accessors, and reading every body would cost a walk of the module)."""
    if len(func.body) > 4:
        return []
    out: list[ast.expr] = []
    for stmt in func.body:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            out.append(stmt.value)
        elif isinstance(stmt, ast.If):
            out.extend(s.value for s in (*stmt.body, *stmt.orelse) if isinstance(s, ast.Return) and s.value)
    return out


def _self_only(func: ast.FunctionDef) -> bool:
    args = func.args
    return (
        len(args.posonlyargs) + len(args.args) == 1
        and not args.kwonlyargs
        and args.vararg is None
        and args.kwarg is None
        and not any(last_name(d) in ("staticmethod", "classmethod") for d in func.decorator_list)
    )


def _static_expr(node: ast.expr, self_name: str, static_fields: set[str]) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Call):
        name = last_name(node.func)
        if name == "len":
            return True
        if name in ("int", "bool", "str", "tuple", "min", "max", "sum", "abs"):
            return all(_static_expr(a, self_name, static_fields) for a in node.args)
        return False
    if isinstance(node, ast.Attribute):
        if node.attr in STATIC_ATTRS:
            return True
        return (
            isinstance(node.value, ast.Name) and node.value.id == self_name and node.attr in static_fields
        ) or _static_expr(node.value, self_name, static_fields) and not isinstance(node.value, ast.Name)
    if isinstance(node, ast.Subscript):
        return _static_expr(node.value, self_name, static_fields)
    if isinstance(node, ast.BinOp):
        return _static_expr(node.left, self_name, static_fields) and _static_expr(
            node.right, self_name, static_fields)
    if isinstance(node, ast.UnaryOp):
        return _static_expr(node.operand, self_name, static_fields)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_static_expr(e, self_name, static_fields) for e in node.elts)
    return False


def _array_expr(node: ast.expr, is_array_call: Callable[[ast.Call], bool]) -> bool:
    return any(isinstance(sub, ast.Call) and is_array_call(sub) for sub in ast.walk(node))
