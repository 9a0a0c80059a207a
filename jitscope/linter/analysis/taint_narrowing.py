"""What a branch condition proves about names: ``isinstance`` narrowing and early exits.

``if isinstance(i, int):`` means ``i`` is a concrete Python int inside the branch,
whatever flowed into it; ``if not isinstance(x, np.ndarray): raise`` proves it
after the ``if``. jax's own code relies on these guards to mix static and traced
paths, so the taint pass honours them.
"""

from __future__ import annotations

import ast

from jitscope.linter.analysis.qualified_names import last_name

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


def exits(body: list[ast.stmt]) -> bool:
    """True when a block always leaves (return, raise, continue, break)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
