"""JS201 `traced-control-flow`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    TAINT,
    ModuleContext,
    TracedFunction,
    label,
    traced_because,
)
from jitscope.linter.fix_builder import has_comment, module_alias, replace_between, segment, text_between
from jitscope.linter.rule import TracedValueRule
from jitscope.model.lint import Finding, Fix
from jitscope.units import plural

_TESTED = (ast.If, ast.While, ast.IfExp, ast.Assert)
#: the nodes _check looks at: tests, comprehension filters, `and`/`or`, `not`
_TESTING = (*_TESTED, ast.comprehension, ast.BoolOp, ast.UnaryOp)


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

    ## Fix
    `jitscope lint --fix` rewrites `if c: a = X` / `else: a = Y` (also `return X` / `return Y`, and
    `X if c else Y`) to `jnp.where(c, X, Y)` where that computes what the branch would: `X` and `Y` are
    made of the same names and kinds of constants with `+`, `-`, `*` (so they have one shape and dtype,
    `jnp.where` neither broadcasts nor promotes, and evaluating both sides costs no call, no side effect
    and no NaN in a gradient), at least one of them a traced array, and no comment would be lost. The
    condition must be a scalar, as Python's `if` requires.
    """

    code = "JS201"
    name = "traced-control-flow"
    severity = "error"
    fixable = True
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
            for node, parent in ctx.body_nodes(facts, _TESTING):
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
                # one finding per condition, at its first traced operand: a generated `a and b and ...`
                # of thousands of terms is one mistake, not thousands
                traced = [(test, kind) for test, kind in tests if facts.is_traced(test)]
                if traced:
                    test, kind = traced[0]
                    more = f" (and {plural(len(traced) - 1, 'more traced operand')})" if traced[1:] else ""
                    yield ctx.finding(
                        self,
                        test,
                        f"Python {kind} on traced value `{label(test)}`{more} in `{facts.qualname}`: its "
                        "truth is unknown while tracing" + traced_because(facts),
                        facts.qualname,
                        _suggestion(kind),
                    )

    def fix(self, ctx: ModuleContext, facts: TracedFunction, node: ast.expr,
            parents: dict[int, ast.AST]) -> Fix | str | None:
        parent = parents.get(id(node))
        if isinstance(parent, ast.IfExp) and parent.test is node:
            outer: ast.AST = parent
            shape: tuple[ast.expr, ast.expr, ast.stmt | None, str] = (parent.body, parent.orelse, None, "")
        elif isinstance(parent, ast.If) and parent.test is node:
            outer = parent
            found = _if_shape(ctx, facts, parent, parents)
            if isinstance(found, str):
                return found
            shape = found
        elif isinstance(parent, ast.If | ast.IfExp | ast.BoolOp | ast.UnaryOp) and not isinstance(
                parents.get(id(parent)), ast.comprehension):
            return "the condition combines several tests"
        else:
            return None  # while, assert, comprehension filters: no expression form
        yes, no, last, head = shape
        problem = _branch_problem(facts, yes, no)
        if problem:
            return problem
        if has_comment(ctx, outer, [node, yes, no], last):
            return "a comment inside the statement would be lost"
        texts = [segment(ctx, n) for n in (node, yes, no)]
        if any(t is None for t in texts):
            return "its text could not be taken apart"
        where = module_alias(ctx, "jax.numpy", "jnp", facts)
        if where is None:
            return "`jnp` names something else here"
        jnp, imports = where
        call = f"{jnp}.where({texts[0]}, {texts[1]}, {texts[2]})"
        edit = replace_between(ctx, outer, last or outer, head + call)
        return Fix(f"Replace with `{jnp}.where(...)`", (edit, *imports))


_SAME_TYPE_OPS = (ast.Add, ast.Sub, ast.Mult)


def _if_shape(ctx: ModuleContext, facts: TracedFunction, stmt: ast.If,
              parents: dict[int, ast.AST]) -> tuple[ast.expr, ast.expr, ast.stmt | None, str] | str:
    """(X, Y, the last statement replaced, what the rewrite starts with) of ``if c: a = X else: a = Y``, ``if c: return X else: return Y``
    or ``if c: return X`` followed by ``return Y``; or why the ``if`` is not one of those."""
    line = ctx.lines[stmt.lineno - 1]
    if text_between(ctx, (stmt.lineno, 1), (stmt.lineno, len(line) + 1)).lstrip().startswith("elif"):
        return "an elif branch"
    if len(stmt.body) != 1:
        return "a branch has more than one statement"
    yes = stmt.body[0]
    if isinstance(yes, ast.Return) and not stmt.orelse:
        block = _block_of(stmt, parents.get(id(stmt)))
        at = next((i for i, s in enumerate(block) if s is stmt), -1)
        after = block[at + 1] if 0 <= at < len(block) - 1 else None
        if isinstance(after, ast.Return) and yes.value is not None and after.value is not None:
            return yes.value, after.value, after, "return "
        return "the if has no else branch"
    if len(stmt.orelse) != 1:
        return "the if has no else branch" if not stmt.orelse else "a branch has more than one statement"
    no = stmt.orelse[0]
    if isinstance(yes, ast.Return) and isinstance(no, ast.Return) and yes.value and no.value:
        return yes.value, no.value, None, "return "
    if (isinstance(yes, ast.Assign) and isinstance(no, ast.Assign) and len(yes.targets) == len(no.targets) == 1
            and isinstance(yes.targets[0], ast.Name) and isinstance(no.targets[0], ast.Name)
            and yes.targets[0].id == no.targets[0].id):
        return yes.value, no.value, None, f"{yes.targets[0].id} = "
    return "the branches do not both assign one name or both return"


def _block_of(stmt: ast.stmt, parent: ast.AST | None) -> list[ast.stmt]:
    for name in ("body", "orelse", "finalbody"):
        block = getattr(parent, name, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            return block
    for handler in getattr(parent, "handlers", ()):
        if any(s is stmt for s in handler.body):
            return list(handler.body)
    return []


def _branch_problem(facts: TracedFunction, yes: ast.expr, no: ast.expr) -> str | None:
    """Why ``jnp.where(c, yes, no)`` might not be ``yes if c else no``: the sides may differ in shape or
    dtype (broadcast, promoted), evaluating both may call something or put a NaN in a gradient."""
    yes_leaves, no_leaves = _leaves(yes), _leaves(no)
    if yes_leaves is None or no_leaves is None:
        return "a branch calls a function, divides, or is not arithmetic (jnp.where evaluates both)"
    if yes_leaves != no_leaves:
        return (f"`{label(yes)}` and `{label(no)}` may differ in shape or dtype "
                "(jnp.where would broadcast and promote them)")
    traced = [n for n in (*_leaf_nodes(yes), *_leaf_nodes(no)) if facts.flags_of(n) & TAINT]
    if not traced:
        return "neither branch is a traced array"
    if not all(facts.is_traced(n) for n in traced):
        return f"`{label(traced[0])}` is traced but may not be an array"
    return None


def _leaves(node: ast.expr) -> frozenset[str] | None:
    """The names, attributes, subscripts and kinds of constants ``node`` is made of with ``+ - *`` and
    unary ``-``/``+``; None when it has anything else."""
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, _SAME_TYPE_OPS):
            return None
        left, right = _leaves(node.left), _leaves(node.right)
        return None if left is None or right is None else left | right
    if isinstance(node, ast.UnaryOp):
        return _leaves(node.operand) if isinstance(node.op, ast.USub | ast.UAdd) else None
    if isinstance(node, ast.Constant):
        value = node.value
        return frozenset({type(value).__name__}) if isinstance(value, int | float) else None
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
        if any(isinstance(sub, ast.Call | ast.NamedExpr | ast.Lambda | ast.Await | ast.Yield | ast.YieldFrom)
               for sub in ast.walk(node)):
            return None
        return frozenset({ast.dump(node)})
    return None


def _leaf_nodes(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp):
        return [*_leaf_nodes(node.left), *_leaf_nodes(node.right)]
    if isinstance(node, ast.UnaryOp):
        return _leaf_nodes(node.operand)
    return [node] if isinstance(node, ast.Name | ast.Attribute | ast.Subscript) else []
