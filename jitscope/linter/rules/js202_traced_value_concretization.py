"""JS202 `traced-value-concretization`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    ARRAY,
    CONTAINER,
    ModuleContext,
    TracedFunction,
    label,
    traced_because,
)
from jitscope.linter.rule import TracedValueRule
from jitscope.model.lint import Finding

_CONCRETIZERS = frozenset({"bool", "int", "float", "complex"})


_CONCRETE_METHODS = frozenset({"item", "tolist", "__bool__", "__int__", "__float__", "__index__"})


#: jnp creation functions -> positions of their shape arguments (None: every positional argument)
_SHAPE_ARGS: dict[str, tuple[int, ...] | None] = {
    "zeros": (0,),
    "ones": (0,),
    "empty": (0,),
    "full": (0,),
    "eye": (0, 1),
    "identity": (0,),
    "arange": None,
    "tri": (0, 1),
    "reshape": (1,),
    "broadcast_to": (1,),
    "tile": (1,),
}


_SHAPE_KEYWORDS = frozenset({"shape", "num", "newshape", "reps", "N", "M"})


class Concretization(TracedValueRule):
    """Converting a traced value to a concrete Python value.

    ## What it does
    Flags `bool()`, `int()`, `float()`, `complex()`, `.item()`, `.tolist()`,
    `range(traced)`, `math.*` on traced values, traced values used as shapes
    (`jnp.zeros(n)`, `x.reshape(n, -1)`), and Python lists indexed by a traced value.

    ## Why is this bad?
    A traced value has no concrete value while tracing; JAX raises
    `ConcretizationTypeError` or `TracerIntegerConversionError`.

    ## Example
    ```python
    @jax.jit
    def f(x, n):
        return jnp.zeros(int(n)) + x.sum().item()
    ```

    ## Use instead
    ```python
    @functools.partial(jax.jit, static_argnames="n")
    def f(x, n):
        return jnp.zeros(n) + x.sum()
    ```
    """

    code = "JS202"
    name = "traced-value-concretization"
    severity = "error"
    summary = "int()/float()/bool()/.item()/range()/shapes from a traced value fail while tracing"
    failure_kinds = frozenset({"concretization", "integer_conversion"})
    bad = (
        "import jax\n@jax.jit\ndef f(x):\n    return int(x)\n",
        "import jax\n@jax.jit\ndef f(x):\n    return x.sum().item()\n",
        "import jax\n@jax.jit\ndef f(x, n):\n    for i in range(n):\n        x = x + 1\n    return x\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x, n):\n    return jnp.zeros(n) + x\n",
        "import jax\n@jax.jit\ndef f(x, i):\n    table = [1.0, 2.0, 3.0]\n    return x * table[i]\n",
    )
    good = (
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    n = int(x.shape[0])\n    return jnp.zeros(n) + float(len(x))\n",
        "import jax\n@jax.jit\ndef f(xs, i):\n    return xs[i] * 2\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    y = x.reshape(x.shape[0], -1)\n    return jnp.zeros(x.shape) + y.sum()\n",
        "import jax\n@jax.jit\ndef f(x, y):\n    d = {'w': x, 'b': y}\n    scale = {'w': 2, 'b': 1}\n    return sum(scale[name] * d[name] for name in sorted(d))\n",
        "import jax\n@jax.jit\ndef f(grads):\n    scale = {'w': 2.0, 'b': 1.0}\n    total = 0.0\n    for name in sorted(grads):\n        total = total + scale[name] * grads[name]\n    return total\n",
    )

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts, call in ctx.calls_in_traced_code():
            what = self._call(ctx, facts, call)
            if what is not None:
                yield ctx.finding(
                    self,
                    call,
                    f"{what} in `{facts.qualname}` needs a concrete value, but it is traced"
                    + traced_because(facts),
                    facts.qualname,
                    "keep the value as a jax array (jnp ops, lax.fori_loop), or make the argument static",
                )
        for facts in ctx.functions:
            for node, _ in ctx.body_nodes(facts, (ast.Subscript,)):
                if (
                    isinstance(node, ast.Subscript)
                    and isinstance(node.ctx, ast.Load)
                    and facts.is_traced(node.slice)
                    and self._python_sequence(ctx, facts, node.value)
                ):
                    yield ctx.finding(
                        self,
                        node,
                        f"Python sequence `{label(node.value)}` indexed by traced value `{label(node.slice)}` "
                        f"in `{facts.qualname}`" + traced_because(facts),
                        facts.qualname,
                        "convert the sequence to an array first (jnp.asarray(seq)[i]) or use lax.switch",
                    )

    @staticmethod
    def _call(ctx: ModuleContext, facts: TracedFunction, call: ast.Call) -> str | None:
        func = call.func
        args = call.args
        if isinstance(func, ast.Name) and ctx.is_builtin(facts, func.id):
            if func.id in _CONCRETIZERS and args and facts.is_traced(args[0]):
                return f"{func.id}({label(args[0])})"
            if func.id == "range" and any(facts.is_traced(a) for a in args):
                return f"range() over traced `{label(next(a for a in args if facts.is_traced(a)))}`"
            return None
        if isinstance(func, ast.Attribute) and func.attr in _CONCRETE_METHODS and facts.is_traced(func.value):
            return f".{func.attr}() on `{label(func.value)}`"
        qualified = ctx.qualified_name(func, facts)
        if qualified:
            head, _, last = qualified.rpartition(".")
            if (head == "math" or qualified == "operator.index") and any(facts.is_traced(a) for a in args):
                return f"{qualified}()"
            if head in ("jax.numpy", "jax._src.numpy.lax_numpy") and last in _SHAPE_ARGS:
                positions = _SHAPE_ARGS[last]
                chosen = [a for i, a in enumerate(args) if positions is None or i in positions]
                chosen += [k.value for k in call.keywords if k.arg in _SHAPE_KEYWORDS]
                if any(facts.is_traced(a) for a in chosen):
                    return f"traced shape argument to {qualified}()"
        elif (
            isinstance(func, ast.Attribute)
            and func.attr in ("reshape", "broadcast_to")
            and facts.flags_of(func.value) & ARRAY
        ) and any(facts.is_traced(a) for a in args if not isinstance(a, ast.Starred)):
            return f"traced shape argument to .{func.attr}()"
        return None

    @staticmethod
    def _python_sequence(ctx: ModuleContext, facts: TracedFunction, base: ast.expr) -> bool:
        flags = facts.flags_of(base)
        if flags & CONTAINER and not flags & ARRAY:
            return True
        if isinstance(base, ast.Name) and not flags and base.id not in facts.local_names:
            value = ctx.module_values.get(base.id)
            return base.id not in facts.closure and isinstance(value, (ast.List, ast.Tuple))
        return False
