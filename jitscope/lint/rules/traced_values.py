"""JS201-JS204: using a traced value as if it were a concrete Python or NumPy value."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from jitscope.lint.analysis.qualified_names import is_static_result
from jitscope.lint.analysis.taint import ARRAY, CONTAINER, FunctionFacts
from jitscope.lint.rule import ModuleContext, Rule
from jitscope.lint.rules.common import is_builtin, is_ref_write, label, qualify, traced_because
from jitscope.lint.rules.mutation import is_array_update
from jitscope.lint.rules.side_effects import calls_in_traced_code
from jitscope.model.lint import Finding

_TESTED = (ast.If, ast.While, ast.IfExp, ast.Assert)
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


def _tests(test: ast.expr) -> Iterator[ast.expr]:
    """The operands Python converts to bool when evaluating ``test``."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from _tests(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _tests(test.operand)
    else:
        yield test


class _TracedValueRule(Rule):
    """JS201-JS204 report ``error`` only where the analysis is sure the value is traced: in functions a
    transform traces directly (jitted, vmapped, lax bodies). In helpers reached through calls, taint is
    inferred across call sites (a helper may also run eagerly, or get static values from another caller):
    those findings are warnings."""

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        direct = {facts.qualname: facts.boundary for facts in ctx.functions}
        for finding in self._check(ctx):
            if finding.severity == "error" and not direct.get(finding.function, True):
                finding = dataclasses.replace(finding, severity="warning")
            yield finding

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        return iter(())


class TracedControlFlow(_TracedValueRule):
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


class Concretization(_TracedValueRule):
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
    )

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts, call in calls_in_traced_code(ctx):
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
            for node, _ in ctx.body(facts):
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
    def _call(ctx: ModuleContext, facts: FunctionFacts, call: ast.Call) -> str | None:
        func = call.func
        args = call.args
        if isinstance(func, ast.Name) and is_builtin(ctx, facts, func.id):
            if func.id in _CONCRETIZERS and args and facts.is_traced(args[0]):
                return f"{func.id}({label(args[0])})"
            if func.id == "range" and any(facts.is_traced(a) for a in args):
                return f"range() over traced `{label(next(a for a in args if facts.is_traced(a)))}`"
            return None
        if isinstance(func, ast.Attribute) and func.attr in _CONCRETE_METHODS and facts.is_traced(func.value):
            return f".{func.attr}() on `{label(func.value)}`"
        qualified = qualify(ctx, facts, func)
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
    def _python_sequence(ctx: ModuleContext, facts: FunctionFacts, base: ast.expr) -> bool:
        flags = facts.flags_of(base)
        if flags & CONTAINER and not flags & ARRAY:
            return True
        if isinstance(base, ast.Name) and not flags and base.id not in facts.local_names:
            value = ctx.index.module_values.get(base.id)
            return base.id not in facts.closure and isinstance(value, (ast.List, ast.Tuple))
        return False


class NumpyOnTracedValue(_TracedValueRule):
    """A NumPy function called on a traced value.

    ## What it does
    Flags `np.*` calls whose arguments include traced values. Shape and dtype helpers
    (`np.shape`, `np.ndim`, `np.result_type`, `np.finfo`, ...) are fine.

    ## Why is this bad?
    NumPy needs concrete data; given a tracer it raises `TracerArrayConversionError`.

    ## Example
    ```python
    @jax.jit
    def f(x):
        return np.sin(x) + np.asarray(x).sum()
    ```

    ## Use instead
    ```python
    @jax.jit
    def f(x):
        return jnp.sin(x) + jnp.asarray(x).sum()
    ```
    """

    code = "JS203"
    name = "numpy-on-traced-value"
    severity = "error"
    summary = "np.* calls on traced values raise TracerArrayConversionError"
    bad = (
        "import jax, numpy as np\n@jax.jit\ndef f(x):\n    return np.sin(x)\n",
        "import jax, numpy as np\n@jax.jit\ndef f(x):\n    y = x * 2\n    return np.asarray(y).sum()\n",
    )
    good = (
        "import jax, numpy as np\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    n = np.prod(x.shape)\n    return jnp.sin(x) * np.float32(2.0) / n + np.finfo(x.dtype).eps\n",
        "import numpy as np\ndef g(x):\n    return np.sin(x)\n",
    )

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts, call in calls_in_traced_code(ctx):
            qualified = qualify(ctx, facts, call.func)
            if not qualified or not qualified.startswith("numpy.") or is_static_result(qualified):
                continue
            if any(facts.is_traced(a) for a in (*call.args, *(k.value for k in call.keywords))):
                short = "np." + qualified.partition(".")[2]
                yield ctx.finding(
                    self,
                    call,
                    f"`{short}()` called on a traced value in `{facts.qualname}`; NumPy cannot consume tracers"
                    + traced_because(facts),
                    facts.qualname,
                    f"use `jnp.{qualified.partition('.')[2]}` (jax.numpy) instead",
                )


_ARRAYISH_ATTRS = frozenset({"shape", "ndim", "dtype", "at", "T", "reshape", "astype", "sum", "mean", "size"})


def _known_array(ctx: ModuleContext, facts: FunctionFacts, base: ast.expr) -> bool:
    """A traced parameter could be a list or dict pytree; only count it as an array when the
    function also uses it as one (``x.shape``, ``x.at``, arithmetic)."""
    if not (isinstance(base, ast.Name) and base.id in facts.tainted_params):
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


class InPlaceArrayUpdate(_TracedValueRule):
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
                    if not isinstance(target, ast.Subscript) or not is_array_update(facts, target):
                        continue
                    if is_ref_write(ctx, target) or not _known_array(ctx, facts, target.value):
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
