"""JS204 `in-place-array-update`: docs, examples and static check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    ModuleContext,
    TracedFunction,
    label,
    traced_because,
)
from jitscope.linter.rule import TracedValueRule
from jitscope.model.lint import Finding

_ARRAYISH_ATTRS = frozenset({"shape", "ndim", "dtype", "at", "T", "reshape", "astype", "sum", "mean", "size"})


def _multi_axis(index: ast.expr) -> bool:
    """``u[0, :]``, ``u[..., 1]``: NumPy-style indexing over several axes, which no list or dict takes."""
    return isinstance(index, ast.Tuple) and any(
        isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and e.value is Ellipsis) for e in index.elts
    )


def _known_array(ctx: ModuleContext, facts: TracedFunction, target: ast.Subscript) -> bool:
    """A traced parameter could be a list or dict pytree; only count it as an array when the index is
    itself traced (a list or dict cannot be indexed by a tracer), or when the function also uses it as
    one (``x.shape``, ``x.at``, arithmetic)."""
    base = target.value
    if not (isinstance(base, ast.Name) and base.id in facts.tainted_params):
        return True
    if facts.is_traced(target.slice) or _multi_axis(target.slice):
        return True
    if facts.kind in (
        "jit",
        "pmap",
        "vmap",
        "filter_jit",
        "filter_vmap",
        "shard_map",
        "checkpoint",
        "custom_jvp",
        "custom_vjp",
    ):
        return True  # arguments of a jitted function: arrays unless shown otherwise
    name = base.id
    for node, _ in ctx.body(facts):
        if isinstance(node, ast.Attribute) and node.attr in _ARRAYISH_ATTRS:
            if isinstance(node.value, ast.Name) and node.value.id == name:
                return True
        elif isinstance(node, ast.BinOp):
            for side in (node.left, node.right):
                if isinstance(side, ast.Name) and side.id == name:
                    return True
    return False


class InPlaceArrayUpdate(TracedValueRule):
    """In-place item assignment on a JAX array.

    ## What it does
    Flags `x[i] = v`, `x[i] += v` and `del x[i]` where `x` is a JAX array (a traced
    argument, or the result of a `jnp`/`lax` call).

    ## Why is this bad?
    JAX arrays are immutable; the assignment raises `TypeError` ("JAX arrays are
    immutable and do not support in-place item assignment").

    ## Example
    ```python
    @jax.jit
    def f(x):
        x[0] = 1.0
        return x
    ```

    ## Use instead
    ```python
    @jax.jit
    def f(x):
        return x.at[0].set(1.0)
    ```
    """

    code = "JS204"
    name = "in-place-array-update"
    severity = "error"
    summary = "x[i] = v on a JAX array raises TypeError; use x.at[i].set(v)"
    bad = (
        "import jax\n@jax.jit\ndef f(x):\n    x[0] = 1.0\n    return x\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    buf = jnp.zeros(3)\n    buf[1] += x\n    return buf\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(x):\n    x = x.at[0].set(1.0)\n    rows = [x, x]\n    rows[0] = x * 2\n    return rows\n",
        "import numpy as np\nimport jax\n@jax.jit\ndef f(x):\n    idx = np.zeros(3, dtype=int)\n    idx[0] = 2\n    return x[idx]\n",
    )

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            for node, _ in ctx.body(facts):
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AugAssign, ast.Delete)):
                    targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets
                else:
                    continue
                for target in targets:
                    if not isinstance(target, ast.Subscript) or not ctx.is_array_update(facts, target):
                        continue
                    if ctx.is_ref_write(target) or not _known_array(ctx, facts, target):
                        continue
                    op = ".add" if isinstance(node, ast.AugAssign) else ".set"
                    base, idx = label(target.value), label(target.slice)
                    yield ctx.finding(
                        self,
                        target,
                        f"in-place item assignment on JAX array `{base}` in `{facts.qualname}`; JAX arrays are "
                        "immutable" + traced_because(facts),
                        facts.qualname,
                        f"{base} = {base}.at[{idx}]{op}(...)",
                    )
