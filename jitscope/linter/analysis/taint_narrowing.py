"""What a branch condition proves about names: ``isinstance`` narrowing and early exits.

``if isinstance(i, int):`` means ``i`` is a concrete Python int inside the branch,
whatever flowed into it; ``if not isinstance(x, np.ndarray): raise`` proves it
after the ``if``. jax's own code relies on these guards to mix static and traced
paths, so the taint pass honours them.
"""

from __future__ import annotations

import ast
from typing import Protocol

from jitscope.linter.analysis.module_index import ModuleIndex
from jitscope.linter.analysis.parameters import param_defaults
from jitscope.linter.analysis.qualified_names import last_name
from jitscope.linter.analysis.taint_flags import FunctionFacts


class TaintAnalyzer(Protocol):
    """What these checks read of ``taint.TaintAnalyzer`` (a protocol: taint.py imports this module)."""

    index: ModuleIndex
    facts: FunctionFacts
    flags: dict[int, int]
    env: dict[str, int]
    bound: set[str]

#: Calls whose truth proves their argument is a concrete Python/NumPy value (jax internals).
_CONCRETE_CHECKS = frozenset({"is_constant_dim", "is_constant_shape", "is_concrete", "is_python_scalar"})


_TRACED_TYPE_WORDS = ("Tracer", "Array", "Value", "Jaxpr")


def _static_type(node: ast.expr) -> bool:
    """True when ``isinstance(x, node)`` proves ``x`` is not a tracer."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    for item in items:
        name = (
            item.attr if isinstance(item, ast.Attribute) else item.id if isinstance(item, ast.Name) else None
        )
        if name is None or (any(w in name for w in _TRACED_TYPE_WORDS) and name != "ndarray"):
            return False
        jax_ndarray = (
            isinstance(item, ast.Attribute)
            and isinstance(item.value, ast.Name)
            and item.value.id in ("jnp", "jax")
        )
        if name == "ndarray" and jax_ndarray:
            return False
    return True


def narrowed_names(test: ast.expr) -> tuple[set[str], set[str]]:
    """Names proven concrete when ``test`` is true / when it is false."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        positive, negative = narrowed_names(test.operand)
        return negative, positive
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And):
            out: set[str] = set()
            for value in test.values:
                out |= narrowed_names(value)[0]
            return out, set()
        out = set()
        for value in test.values:
            out |= narrowed_names(value)[1]
        return set(), out
    if isinstance(test, ast.Call) and test.args:
        name = last_name(test.func)
        subject = test.args[0]
        if (
            name == "isinstance"
            and len(test.args) == 2
            and isinstance(subject, ast.Name)
            and _static_type(test.args[1])
        ):
            return {subject.id}, set()
        if name in _CONCRETE_CHECKS:
            return {a.id for a in test.args if isinstance(a, ast.Name)}, set()
    return set(), set()


def narrowed_parts(test: ast.expr) -> set[str]:
    """``isinstance(coeffs[1], float)``: the parts of values (subscripts, attributes, as ``ast.dump``)
    proven Python values when ``test`` is true."""
    if (
        isinstance(test, ast.Call)
        and last_name(test.func) == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0], (ast.Subscript, ast.Attribute))
        and _static_type(test.args[1])
    ):
        return {ast.dump(test.args[0])}
    return set()


def exits(body: list[ast.stmt]) -> bool:
    """True when a block always leaves (return, raise, continue, break)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def _is_jax_array_type(node: ast.expr) -> bool:
    """``jax.Array``, ``jnp.ndarray``, ``jax.core.Tracer``: types every tracer is an instance of."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    for item in items:
        name = last_name(item) or ""
        root = item
        while isinstance(root, ast.Attribute):
            root = root.value
        if not (name in ("Array", "Tracer") or (name == "ndarray" and isinstance(root, ast.Name)
                                                 and root.id in ("jnp", "jax"))):
            return False
    return True


def eager_only_branch(analyzer: TaintAnalyzer, test: ast.expr) -> bool | None:
    """The value ``test`` has whenever the function is traced, when one branch only runs eagerly: False
    when the ``if`` body never runs under a trace, True when the ``else`` never does, None when both can.

    - ``isinstance(v, np.ndarray)`` (any type a tracer is not) with ``v`` a traced array: never true;
    - ``isinstance(v, jax.Array)`` with ``v`` traced: always true (``not isinstance`` never);
    - ``p is None`` with ``p`` bound by the ``functools.partial`` that is traced: never true;
    - ``p is None`` with ``p`` a parameter (default None) of the enclosing function, in a nested function
      that the enclosing function also calls directly: that is the eager path (``allocate``), the traced
      one (``update``, through lax.cond or jit) has ``p``.
    """
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = eager_only_branch(analyzer, test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.Call) and last_name(test.func) == "isinstance" and len(test.args) == 2:
        subject, types = test.args
        flags = analyzer.flags.get(id(subject), 0)
        if _is_jax_array_type(types):
            return True if flags & 1 else None
        if flags & 3 == 3 and _static_type(types):
            return False
        return None
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.left, ast.Name)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        if not _bound_when_traced(analyzer, test.left.id):
            return None
        return isinstance(test.ops[0], ast.IsNot)
    return None


def _bound_when_traced(analyzer: TaintAnalyzer, name: str) -> bool:
    facts = analyzer.facts
    if name in analyzer.bound:
        return False
    if name in facts.constants and name not in facts.tainted_params:
        return facts.constants[name] is not None
    if name in analyzer.env or name not in facts.closure:
        return False
    owner = analyzer.index.owner.get(id(facts.func))
    func = facts.func
    if owner is None or isinstance(owner, ast.Lambda) or isinstance(func, ast.Lambda):
        return False
    if not any(p == name and isinstance(d, ast.Constant) and d.value is None for p, d in param_defaults(owner)):
        return False
    return any(
        isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == func.name
        for sub in ast.walk(owner)
    )
