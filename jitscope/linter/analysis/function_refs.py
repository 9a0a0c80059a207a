"""What a function reference in the source points to, and the shape of statements.

``resolve_function`` turns ``body``, ``self.step``, ``partial(f, x)`` or a lambda
into the def it names (with the arguments a partial binds), or into a qualified
name in another module. ``header_roots``/``walk_with_parents`` let discovery look at
one statement's expressions without descending into nested blocks.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

from jitscope.linter.analysis.ast_walk import child_nodes
from jitscope.linter.analysis.module_index import DefNode, FuncNode, ModuleIndex, block_statements
from jitscope.linter.analysis.parameters import (
    literal_ints,
    literal_strs,
    partial_constants,
    partial_keywords,
    self_param,
)
from jitscope.linter.analysis.qualified_names import last_name

_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
#: wrappers that return a function calling the function they are given with the same arguments
_PASS_THROUGH = frozenset({"chex.assert_max_traces", "jax.named_call"})
#: methods a flax module inherits that run the module's ``__call__``
_MODULE_ENTRY_POINTS = frozenset({"apply", "init", "init_with_output"})


@dataclass(slots=True)
class ResolvedFunction:
    func: FuncNode
    owner: FuncNode | None
    bound_method: bool = False
    bound_args: tuple[ast.expr, ...] = ()
    bound_keywords: frozenset[str] = frozenset()
    #: keywords a partial binds to literal constants (``partial(f, training=False)``)
    constants: dict[str, object] = field(default_factory=dict)


def resolve_function(
    index: ModuleIndex,
    expr: ast.expr,
    chain: list[ast.stmt],
    local: dict[str, str] | None = None,
    rebinding: bool = True,
) -> ResolvedFunction | str | None:
    """The function an expression refers to: a def/lambda in this module, a qualified name
    in another module (str), or None when it cannot be known statically. A name rebound to a
    partial of itself earlier in the function (``foo = partial(foo, flag=True)``) is that partial."""
    if isinstance(expr, ast.Lambda):
        owner = innermost_function(chain)
        index.owner.setdefault(id(expr), owner)
        prefix = index.name_of(owner) + "." if owner is not None else ""
        index.qualname.setdefault(id(expr), prefix + "<lambda>")
        return ResolvedFunction(expr, owner)
    if (
        isinstance(expr, ast.Call)
        and index.names.qualify(expr.func, local) == "functools.partial"
        and expr.args
    ):
        inner = resolve_function(index, expr.args[0], chain, local, rebinding)
        if isinstance(inner, ResolvedFunction):
            inner.bound_args = tuple(expr.args[1:])
            inner.bound_keywords = partial_keywords(inner.func, expr)
            inner.constants = partial_constants(expr)
        return inner
    functions = [s for s in chain if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if isinstance(expr, ast.Name):
        if rebinding and functions and chain[-1] is not functions[-1]:
            rebound = _rebound_partial(index, functions[-1], expr.id, chain[-1].lineno, local)
            if rebound is not None:
                return resolve_function(index, rebound, chain, local, rebinding=False)
        for func in reversed(functions):
            found = index.local_defs(func).get(expr.id)
            if found is not None:
                return ResolvedFunction(found, func)
        if expr.id in index.defs:
            return ResolvedFunction(index.defs[expr.id], None)
        instance = instance_class(index, expr.id, chain, local)
        if isinstance(instance, ast.ClassDef):
            # jax.jit(model), eqx.filter_jit(model): a module (a callable object) runs its __call__
            found_method = class_method(index, instance, "__call__")
            return ResolvedFunction(found_method, None, bound_method=True) if found_method else None
        return index.names.qualify(expr, local)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        base = expr.value.id
        if functions:
            method = functions[-1] if len(functions) else None
            classes = [s for s in chain if isinstance(s, ast.ClassDef)]
            if method is not None and classes and self_param(index, method) == base:
                methods = index.methods.get(id(classes[-1]))
                if methods is None:
                    methods = {
                        s.name: s
                        for s in classes[-1].body
                        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                    }
                found_method = methods.get(expr.attr)
                if found_method is not None:
                    index.method_class.setdefault(id(found_method), classes[-1])
                    return ResolvedFunction(found_method, None, bound_method=True)
        cls = index.classes.get(base)
        if cls is not None:
            found_method = index.methods.get(id(cls), {}).get(expr.attr)
            if found_method is not None:
                return ResolvedFunction(found_method, None)
        instance = instance_class(index, base, chain, local)
        if isinstance(instance, ast.ClassDef):
            found_method = class_method(index, instance, expr.attr)
            if found_method is None and expr.attr in _MODULE_ENTRY_POINTS:
                # jax.jit(model.apply): a flax module's apply/init run its __call__
                found_method = class_method(index, instance, "__call__")
            return ResolvedFunction(found_method, None, bound_method=True) if found_method else None
        if instance is not None:
            return f"{instance}.{expr.attr}"
        return index.names.qualify(expr, local)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Call):
        # jax.jit(Generator(path).reset): a method of an object made right there
        made = class_named(index, expr.value.func, local)
        if isinstance(made, ast.ClassDef):
            found_method = class_method(index, made, expr.attr)
            return ResolvedFunction(found_method, None, bound_method=True) if found_method else None
        return f"{made}.{expr.attr}" if made is not None else None
    if isinstance(expr, ast.Call) and expr.args and index.names.qualify(expr.func, local) in _PASS_THROUGH:
        # jax.jit(chex.assert_max_traces(env.step, n=1)): the wrapper calls what it wraps
        return resolve_function(index, expr.args[0], chain, local, rebinding)
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "getattr"
        and len(expr.args) == 2
        and isinstance(expr.args[1], ast.Constant)
        and isinstance(expr.args[1].value, str)
    ):
        # getattr(env, "step"): env.step
        attribute = ast.Attribute(expr.args[0], expr.args[1].value, ast.Load())
        return resolve_function(index, ast.copy_location(attribute, expr), chain, local, rebinding)
    return None


def instance_class(
    index: ModuleIndex, name: str, chain: list[ast.stmt], local: dict[str, str] | None = None
) -> ast.ClassDef | str | None:
    """The class of the object ``name`` holds where ``chain`` ends, when the code says it: a
    parameter annotated with a class (``env: Snake``) or an assignment ``env = Snake(...)`` in an
    enclosing function or at module level. A class of this module, the dotted name of a class of
    another (a name starting with a capital letter), or None."""
    found: ast.expr | None = None
    for func in reversed([s for s in chain if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]):
        found = _annotation_or_constructor(func, name, chain[-1].lineno)
        if found is not None:
            break
    if found is None:
        value = index.module_values.get(name)
        found = value.func if isinstance(value, ast.Call) else None
    return class_named(index, found, local)


def class_named(
    index: ModuleIndex, node: ast.expr | None, local: dict[str, str] | None = None
) -> ast.ClassDef | str | None:
    """The class an annotation or a constructor names: a class of this module, the dotted name of
    one of another module (a name starting with a capital letter), or None. ``Optional[X]`` is X."""
    if isinstance(node, ast.Subscript) and last_name(node.value) == "Optional":
        node = node.slice
    if isinstance(node, ast.Name) and node.id in index.classes:
        return index.classes[node.id]
    dotted = index.names.qualify(node, local) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if dotted is None or "." not in dotted or not dotted.rpartition(".")[2][:1].isupper():
        return None
    return dotted


def attribute_class(index: ModuleIndex, cls: ast.ClassDef, attr: str) -> ast.ClassDef | str | None:
    """The class of ``self.attr`` in ``cls``'s methods, when the code says it: a field annotated
    ``attr: X``, or ``self.attr = X(...)`` / ``= param or X(...)`` / ``= param`` (annotated ``X``)
    in a method."""
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == attr:
            return class_named(index, stmt.annotation)
    for method in index.methods.get(id(cls), {}).values():
        for stmt in block_statements(method.body):
            if not (
                isinstance(stmt, (ast.Assign, ast.AnnAssign))
                and any(
                    isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
                    for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                )
            ):
                continue
            values = stmt.value.values if isinstance(stmt.value, ast.BoolOp) else [stmt.value]
            for value in values:
                found: ast.expr | None = None
                if isinstance(value, ast.Call):
                    found = value.func
                    if isinstance(found, ast.Name) and class_named(index, found) is None:
                        # ctor = custom_ctor or BlockDiagonalCurvature; self._estimator = ctor(...)
                        found = _local_class(method, found.id, stmt.lineno)
                elif isinstance(value, ast.Name):
                    found = _annotation_or_constructor(method, value.id, stmt.lineno)
                named = class_named(index, found)
                if named is not None:
                    return named
    return None


def _local_class(func: DefNode, name: str, before: int) -> ast.expr | None:
    """The class named last in ``name = a or Default`` / ``name = Default`` in ``func`` before ``before``."""
    found: ast.expr | None = None
    for stmt in block_statements(func.body):
        if stmt.lineno >= before:
            break
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            value = stmt.value.values[-1] if isinstance(stmt.value, ast.BoolOp) else stmt.value
            found = value if isinstance(value, (ast.Name, ast.Attribute)) else None
    return found


def _annotation_or_constructor(func: DefNode, name: str, before: int) -> ast.expr | None:
    """The annotation of ``func``'s parameter ``name`` or the callee of its last assignment
    ``name = Callee(...)`` in ``func`` before line ``before``."""
    args = func.args
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        if arg.arg == name:
            return arg.annotation if isinstance(arg.annotation, (ast.Name, ast.Attribute)) else None
    found: ast.expr | None = None
    for stmt in block_statements(func.body):
        if stmt.lineno >= before:
            break
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            found = stmt.value.func if isinstance(stmt.value, ast.Call) else None
    return found


def class_method(index: ModuleIndex, cls: ast.ClassDef, name: str, depth: int = 0) -> DefNode | None:
    """Method ``name`` of ``cls`` or of a base class of this module."""
    method = index.methods.get(id(cls), {}).get(name)
    if method is not None or depth > 8:
        return method
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in index.classes:
            method = class_method(index, index.classes[base.id], name, depth + 1)
            if method is not None:
                return method
    return None


def _rebound_partial(
    index: ModuleIndex,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    before: int,
    local: dict[str, str] | None,
) -> ast.Call | None:
    """The ``functools.partial(name, ...)`` that ``name`` was last bound to in ``func`` before line
    ``before``, if that was its last binding there (None otherwise)."""
    found: ast.Call | None = None
    for stmt in block_statements(func.body):
        if stmt.lineno >= before:
            break
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ):
            value = stmt.value
            is_partial = (
                isinstance(value, ast.Call)
                and value.args
                and isinstance(value.args[0], ast.Name)
                and value.args[0].id == name
                and index.names.qualify(value.func, local) == "functools.partial"
            )
            found = value if is_partial else None  # type: ignore[assignment]
    return found


def header_roots(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions of a statement that are not nested statements."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, (ast.While, ast.If)):
        return [stmt.test]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        return [h.type for h in stmt.handlers if h.type is not None]
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    if isinstance(stmt, ast.ClassDef):
        return [*stmt.decorator_list, *stmt.bases, *stmt.keywords]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return list(stmt.decorator_list)
    return [stmt]


def walk_with_parents(
    roots: list[ast.AST], lines: set[int] | None = None
) -> Iterator[tuple[ast.AST, ast.AST | None, bool]]:
    """Every node under ``roots`` with its parent and whether it sits inside a comprehension.

    With ``lines``, subtrees that span none of those lines are skipped (discovery only cares
    about the expressions on its trigger lines).
    """
    stack: list[tuple[ast.AST, ast.AST | None, bool]] = [(r, None, False) for r in reversed(roots)]
    if lines is None:
        while stack:
            node, parent, in_comp = stack.pop()
            yield node, parent, in_comp
            inner = in_comp or isinstance(node, _COMPS)
            stack.extend((child, node, inner) for child in reversed(child_nodes(node)))
        return
    ordered = sorted(lines)
    while stack:
        node, parent, in_comp = stack.pop()
        yield node, parent, in_comp
        inner = in_comp or isinstance(node, _COMPS)
        for child in reversed(child_nodes(node)):
            first = getattr(child, "lineno", None)
            if first is None or _spans_one(ordered, first, getattr(child, "end_lineno", None) or first):
                stack.append((child, node, inner))


def _spans_one(ordered: list[int], first: int, last: int) -> bool:
    """Whether some line of the sorted ``ordered`` lies in ``first..last`` (a bisection, not a scan)."""
    i = bisect.bisect_left(ordered, first)
    return i < len(ordered) and ordered[i] <= last


def innermost_function(chain: list[ast.stmt]) -> DefNode | None:
    for stmt in reversed(chain):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return stmt
    return None


def loop_in_chain(chain: list[ast.stmt]) -> bool:
    for stmt in reversed(chain):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        if isinstance(stmt, _LOOPS):
            return True
    return False


def names_primitive(call: ast.Call) -> bool:
    return last_name(call.args[0] if call.args else None).endswith("_p")


def nondiff_count(nondiff: dict[str, ast.expr]) -> int:
    """How many leading parameters of a bwd/jvp rule receive the non-differentiable arguments."""
    nums = literal_ints(nondiff.get("nondiff_argnums")) or ()
    names = literal_strs(nondiff.get("nondiff_argnames")) or ()
    return len(nums) + len(names)


def target_label(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return f"{target.value.id}.{target.attr}"
    return None


def decorator_label(dec: ast.expr) -> str:
    node = dec.func if isinstance(dec, ast.Call) else dec
    text = ast.unparse(node)
    if isinstance(dec, ast.Call) and text in ("partial", "functools.partial") and dec.args:
        return f"{text}({ast.unparse(dec.args[0])}, ...)"
    return text


def short_label(label: str) -> str:
    return (
        label
        if label in ("partial",)
        else label.rpartition(".")[2]
        if label.startswith("jax._src")
        else label
    )
