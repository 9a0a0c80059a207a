"""JS304 `varying-shape-in-loop`: docs, examples and static check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.lint.context import (
    CallSite,
    ModuleContext,
    block_statements,
    label,
    last_name,
    uses,
)
from jitscope.lint.rule import Rule
from jitscope.model.lint import Finding

_SHAPE_MAKERS = frozenset(
    {"zeros", "ones", "empty", "full", "arange", "eye", "linspace", "reshape", "broadcast_to"}
)


_GROWERS = frozenset(
    {"concatenate", "append", "vstack", "hstack", "stack", "column_stack", "row_stack", "dstack"}
)


def _growing(cs: CallSite) -> set[str]:
    names: set[str] = set()
    for loop in cs.loops:
        for stmt in block_statements(loop.body):  # type: ignore[attr-defined]
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                name, value = stmt.targets[0].id, stmt.value
                if (
                    isinstance(value, ast.Call)
                    and last_name(value.func) in _GROWERS
                    and uses(value, {name})
                    or isinstance(value, ast.BinOp)
                    and uses(value, {name})
                    and isinstance(value.right, ast.List)
                ):
                    names.add(name)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                func = stmt.value.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("append", "extend")
                    and isinstance(func.value, ast.Name)
                ):
                    names.add(func.value.id)
    return names


def _varying(ctx: ModuleContext, arg: ast.expr, loop_vars: set[str], growing: set[str]) -> str | None:
    for sub in ast.walk(arg):
        if isinstance(sub, ast.Subscript):
            slices = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
            for part in slices:
                if isinstance(part, ast.Slice):
                    lower = part.lower is not None and uses(part.lower, loop_vars)
                    upper = part.upper is not None and uses(part.upper, loop_vars)
                    if lower != upper:
                        return "sliced by the loop variable"
        elif isinstance(sub, ast.Call) and last_name(sub.func) in _SHAPE_MAKERS and uses(sub, loop_vars):
            return "whose shape depends on the loop variable"
        elif isinstance(sub, ast.Name) and sub.id in growing:
            return f"which grows on every iteration (`{sub.id}`)"
    return None


class VaryingShapeInLoop(Rule):
    """Jitted function called in a loop with a shape that changes.

    ## What it does
    Flags calls of a jitted function inside a loop whose arguments are sliced by the
    loop variable (`x[:i]`), built with a loop-dependent shape (`jnp.zeros(i)`), or
    grow on every iteration (`acc = jnp.concatenate([acc, y])`).

    ## Why is this bad?
    Shapes are part of the compilation cache key: every new shape traces and
    compiles the function again.

    ## Example
    ```python
    for i in range(1, n):
        total = total + prefix_sum(x[:i])
    ```

    ## Use instead
    ```python
    # pad to a fixed shape and pass the length (or a mask) as a traced argument
    for i in range(1, n):
        total = total + prefix_sum(x, i)
    ```
    """

    code = "JS304"
    name = "varying-shape-in-loop"
    severity = "warning"
    summary = "a jitted function called in a loop with loop-dependent or growing shapes recompiles each time"
    bad = (
        "import jax\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run(x):\n    t = 0\n    for i in range(1, 10):\n        t = t + f(x[:i])\n    return t\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run(y):\n    acc = jnp.zeros(0)\n    for _ in range(10):\n        acc = jnp.concatenate([acc, y])\n        f(acc)\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run():\n    return [f(jnp.ones(i)) for i in range(5)]\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run(x):\n    t = 0\n    for i in range(10):\n        t = t + f(x[i]) + f(x[i:i + 4])\n    return t\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for cs in ctx.call_sites:
            if not cs.in_loop:
                continue
            growing = _growing(cs)
            for arg in (*cs.call.args, *(k.value for k in cs.call.keywords)):
                why = _varying(ctx, arg, cs.loop_vars, growing)
                if why:
                    where = ctx.name_of(cs.function) if cs.function is not None else "<module>"
                    name = ctx.name_of(cs.site.target) if cs.site.target is not None else "function"
                    yield ctx.finding(
                        self,
                        arg,
                        f"jitted `{name}` called in a loop with `{label(arg)}`, {why}: one "
                        "compilation per shape",
                        where,
                        "pad to a fixed shape (or bucket sizes) and pass the length or a mask",
                    )
