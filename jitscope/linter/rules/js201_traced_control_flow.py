"""JS201 `traced-control-flow`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    ModuleContext,
    label,
    traced_because,
)
from jitscope.linter.rule import TracedValueRule
from jitscope.model.lint import Finding

_TESTED = (ast.If, ast.While, ast.IfExp, ast.Assert)


def _tests(test: ast.expr) -> Iterator[ast.expr]:
    """The operands Python converts to bool when evaluating ``test``."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from _tests(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _tests(test.operand)
    else:
        yield test


def _in_test(node: ast.expr, parent: ast.AST | None) -> bool:
    if isinstance(parent, _TESTED) and parent.test is node:
        return True
    if isinstance(parent, ast.comprehension) and node in parent.ifs:
        return True
    return isinstance(parent, ast.BoolOp) or (
        isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
    )


def _suggestion(kind: str) -> str:
    if kind == "while":
        return "use jax.lax.while_loop, or mark the argument static"
    if kind == "assert":
        return "use jax.experimental.checkify, or check outside the jitted function"
    if kind in ("`and`", "`or`", "`not`"):
        return "use jnp.logical_and / jnp.logical_or / jnp.logical_not"
    return "use jnp.where or jax.lax.cond, or mark the argument static (static_argnums/static_argnames)"


class TracedControlFlow(TracedValueRule):
    """Python control flow on a traced value.

    ## What it does
    Flags `if`/`elif`/`while` conditions, ternaries, `assert`, comprehension filters
    and `and`/`or`/`not` operands that depend on traced values. Conditions on static
    information (`x.ndim == 2`, `len(xs)`, `x is None`, static arguments) are fine.

    ## Why is this bad?
    While tracing, the value is abstract: Python cannot pick a branch and JAX raises
    `TracerBoolConversionError` (a `ConcretizationTypeError`).

    ## Example
    ```python
    @jax.jit
    def relu(x):
        if x > 0:
            return x
        return 0.0
    ```

    ## Use instead
    ```python
    @jax.jit
    def relu(x):
        return jnp.where(x > 0, x, 0.0)   # or jax.lax.cond for expensive branches
    ```
    """

    code = "JS201"
    name = "traced-control-flow"
    severity = "error"
    summary = "Python if/while/assert/and/or/not on a traced value fails while tracing"
    failure_kinds = frozenset({"bool_conversion"})
    bad = (
        "import jax\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n",
        "import jax\n@jax.jit\ndef f(x, n):\n    i = 0\n    while i < n:\n        i += 1\n    return x\n",
        "import jax\n@jax.jit\ndef f(x):\n    return x if x.sum() > 0 else -x\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    assert jnp.all(x > 0)\n    return x\n",
        "import jax\nfrom jax import lax\ndef run(xs):\n    def body(c, x):\n        c = c + x if x > 0 else c\n        return c, x\n    return lax.scan(body, 0.0, xs)\n",
        "import jax\ndef helper(v):\n    if v.sum() > 0:\n        return v\n    return -v\n@jax.jit\ndef f(x):\n    return helper(x)\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(x):\n    if x.ndim == 2:\n        x = x.sum(axis=0)\n    return x\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='n')\ndef f(x, n):\n    for i in range(n):\n        x = x + i\n    if n > 2:\n        x = -x\n    return x\n",
        "import jax\n@jax.jit\ndef f(x, mask=None):\n    if mask is not None:\n        x = x * mask\n    n = x.shape[0]\n    for i in range(n):\n        x = x + i\n    return x if len(x) > 1 else x\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    if jnp.issubdtype(x.dtype, jnp.floating) and x.size > 0:\n        return x\n    return x\n",
        "import jax\ndef helper(v, k):\n    if k > 1:\n        return v * k\n    return v\n@jax.jit\ndef f(x):\n    return helper(x, 3)\n",
        "import jax\n@jax.jit\ndef f(params):\n    if 'bias' in params:\n        return params['w'] + params['bias']\n    return params['w']\n",
    )

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            for node, parent in ctx.body(facts):
                tests: list[tuple[ast.expr, str]] = []
                if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
                    kind = {
                        ast.If: "if",
                        ast.While: "while",
                        ast.IfExp: "conditional expression",
                        ast.Assert: "assert",
                    }[type(node)]
                    tests = [(t, kind) for t in _tests(node.test)]
                elif isinstance(node, ast.comprehension):
                    tests = [(t, "comprehension filter") for cond in node.ifs for t in _tests(cond)]
                elif isinstance(node, ast.BoolOp) and not _in_test(node, parent):
                    op = "and" if isinstance(node.op, ast.And) else "or"
                    tests = [(t, f"`{op}`") for v in node.values[:-1] for t in _tests(v)]
                elif (
                    isinstance(node, ast.UnaryOp)
                    and isinstance(node.op, ast.Not)
                    and not _in_test(node, parent)
                ):
                    tests = [(t, "`not`") for t in _tests(node.operand)]
                for test, kind in tests:
                    if facts.is_traced(test):
                        yield ctx.finding(
                            self,
                            test,
                            f"Python {kind} on traced value `{label(test)}` in `{facts.qualname}`: its truth is "
                            "unknown while tracing" + traced_because(facts),
                            facts.qualname,
                            _suggestion(kind),
                        )
