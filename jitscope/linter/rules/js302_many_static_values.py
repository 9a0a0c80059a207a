"""JS302 `many-static-values`: docs, examples and static check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    CallSite,
    ModuleContext,
    argument_for,
    block_statements,
    param_defaults,
    static_params,
    uses,
)
from jitscope.linter.rule import Rule
from jitscope.model.lint import Finding

_REDUCTIONS = frozenset(
    {"sum", "max", "min", "mean", "prod", "argmax", "argmin", "count_nonzero", "any", "all"}
)


def _data_derived(node: ast.AST) -> bool:
    """Contains ``.item()``/``.tolist()``, or ``int()``/``float()`` of a reduction (``int(mask.sum())``)
    -- except as an index (``table[i.item()]`` picks one of a few values)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("item", "tolist")
    ):
        return True
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("int", "float")
        and node.args
        and _reduces(node.args[0])
    ):
        return True
    if isinstance(node, ast.Subscript):
        return _data_derived(node.value)
    return any(_data_derived(child) for child in ast.iter_child_nodes(node))


def _reduces(node: ast.expr) -> bool:
    """An array reduction: ``mask.sum()``, ``jnp.max(x)``."""
    return any(
        isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _REDUCTIONS
        for sub in ast.walk(node)
    )


def _data_derived_name(cs: CallSite, arg: ast.expr) -> bool:
    if not isinstance(arg, ast.Name) or cs.function is None:
        return False
    for stmt in block_statements(cs.function.body):
        if stmt.lineno >= cs.call.lineno:
            break
        if (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == arg.id for t in stmt.targets)
            and _data_derived(stmt.value)
        ):
            return True
    return False


class ManyStaticValues(Rule):
    """Static argument that takes many distinct values.

    ## What it does
    Flags static parameters annotated or defaulted as `float`, and call sites that
    pass a loop variable (also over a literal sweep of floats, `for lr in [1e-2, 1e-3]`, or a
    name set from one in the loop, except a `min`/`max` clamp),
    a value computed from array data (`.item()`, `.tolist()`, `int(mask.sum())`), or a fresh
    lambda, `functools.partial` or closure made by a factory (`loss_fn=smoothed_l1(beta)`) as
    a static argument. For `eqx.filter_jit`, `nnx.jit` and `named_jit`, which hold every
    non-array argument static, it flags loop counters (also over a literal sweep of five or
    more numbers, or of floats), `float(v)`/`int(v)` of a loop variable, fresh lambdas and numbers computed
    from arrays.

    ## Why is this bad?
    Each distinct static value compiles a new program. A learning rate, a step
    counter or a data-dependent length as a static argument recompiles on nearly
    every call.

    ## Example
    ```python
    @functools.partial(jax.jit, static_argnames="step")
    def update(params, step):
        return params * 0.99 ** step

    for step in range(1000):
        params = update(params, step=step)
    ```

    ## Use instead
    ```python
    @jax.jit
    def update(params, step):      # step is traced: one compilation
        return params * 0.99 ** step
    ```
    """

    code = "JS302"
    name = "many-static-values"
    severity = "warning"
    summary = "float, loop-variable or data-derived static arguments recompile for every distinct value"
    bad = (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='step')\ndef f(x, step):\n    return x * step\ndef train(x):\n    for step in range(100):\n        x = f(x, step=step)\n    return x\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=1)\ndef f(x, lr: float):\n    return x * lr\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=1)\ndef f(x, n):\n    return x * n\ndef g(x, mask):\n    n = mask.sum().item()\n    return f(x, n)\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='lr')\ndef step(m, x, lr):\n    return m - lr * x\ndef sweep(m, x):\n    for lr in [1e-2, 5e-3, 1e-3]:\n        m = step(m, x, lr)\n    return m\n",
        "import equinox as eqx\n@eqx.filter_jit\ndef step(m, x, lr):\n    return m - lr * x\ndef sweep(m, x):\n    for lr in [1e-2, 5e-3, 1e-3]:\n        m = step(m, x, lr)\n    return m\n",
    )
    good = (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='mode')\ndef f(x, mode):\n    return x if mode == 'a' else -x\ndef g(x):\n    for mode in ('a', 'b'):\n        x = f(x, mode=mode)\n    return x\n",
        "import jax\n@jax.jit\ndef f(x, step):\n    return x * step\ndef train(x):\n    for step in range(100):\n        x = f(x, step)\n    return x\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='depth')\ndef f(x, depth):\n    return x * depth\ndef g(x):\n    for depth in (1, 2):\n        x = f(x, depth=depth)\n    return x\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for site in ctx.jit_sites:
            if site.target is None:
                continue
            static = static_params(site)
            name = ctx.jitted_name(site)
            defaults = dict(param_defaults(site.target))
            args = site.target.args
            for param_node in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                if param_node.arg not in static:
                    continue
                ann, default = param_node.annotation, defaults.get(param_node.arg)
                annotated = isinstance(ann, ast.Name) and ann.id == "float"
                defaulted = isinstance(default, ast.Constant) and isinstance(default.value, float)
                if annotated or defaulted:
                    yield ctx.finding(
                        self,
                        param_node,
                        f"static parameter `{param_node.arg}` of jitted `{name}` is a float: every "
                        "distinct value compiles anew",
                        name,
                        "make it a traced argument",
                    )
        for cs in ctx.call_sites:
            filtered = cs.site.kind == "filter_jit"
            static = static_params(cs.site)
            counters = (_range_vars(cs) | _float_sweeps(cs)) if filtered else set()
            varying: list[tuple[str, ast.expr, str]] = []
            for param, arg in argument_for(cs.site, cs.call).items():
                if not filtered and param not in static:
                    continue
                why = _why(ctx, cs, arg, counters) if filtered else _why_static(ctx, cs, arg)
                if why:
                    varying.append((param, arg, why))
            if varying:  # one finding per call: the values recompile together
                param, arg, why = varying[0]
                kind = "argument (held static by the filter_jit-style wrapper)" if filtered else "argument"
                also = ", ".join(f"`{p}`" for p, _, _ in varying[1:])
                yield ctx.finding(
                    self,
                    arg,
                    f"static {kind} `{param}` of jitted `{ctx.jitted_name(cs.site)}` "
                    f"{why}: one compilation per distinct value" + (f" (also {also})" if also else ""),
                    ctx.caller_name(cs),
                    "pass it as a traced argument (an array), or bucket its values",
                )


_FRESH = "is a new function object on every call"


def _why_static(ctx: ModuleContext, cs: CallSite, arg: ast.expr) -> str | None:
    """Why a value for a declared static parameter recompiles."""
    if (_fresh_function(arg) or ctx.makes_closure(arg)) and cs.function is not None:
        return _FRESH
    changing = cs.loop_vars | _float_sweeps(cs)
    if cs.in_loop and (uses(arg, changing) or _set_from_loop_vars(cs, arg, changing)):
        return "changes on every loop iteration"
    if _data_derived(arg) or _data_derived_name(cs, arg):
        return "is computed from array data"
    return None


def _why(ctx: ModuleContext, cs: CallSite, arg: ast.expr, counters: set[str]) -> str | None:
    """Why a Python value given to a filter_jit-style function (which holds non-arrays static) recompiles:
    an int loop counter, a fresh lambda, or a number computed from array data."""
    if (_fresh_function(arg) or ctx.makes_closure(arg)) and (cs.function is not None or cs.in_loop):
        return _FRESH
    if counters and _counter_expr(arg, counters):
        return "is a Python number that changes on every loop iteration"
    if _number_of(arg, cs.loop_vars):
        return "is a Python number that changes on every loop iteration"
    if isinstance(arg, ast.Call) and _data_derived(arg):
        return "is a Python number computed from array data"
    return None


def _fresh_function(arg: ast.expr) -> bool:
    return isinstance(arg, ast.Lambda) or (isinstance(arg, ast.Call) and _last(arg.func) == "partial")


def _last(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


#: a literal sweep of at least this many numbers is one compilation per value (fewer: a few modes on purpose)
_SWEEP = 5


def _range_vars(cs: CallSite) -> set[str]:
    """Targets of the enclosing ``for v in range(...)`` loops and comprehensions, or of those over a
    literal sweep of numbers (``for n in (10, 20, 40, 80, 160)``): Python numbers."""
    headers: list[tuple[ast.expr, ast.expr]] = [
        (loop.target, loop.iter) for loop in cs.loops if isinstance(loop, ast.For)
    ]
    if cs.in_comp and cs.function is not None:
        for node in ast.walk(cs.function):
            if isinstance(node, _COMPS) and any(sub is cs.call for sub in ast.walk(node)):
                headers.extend((gen.target, gen.iter) for gen in node.generators)
    return {
        target.id
        for target, it in headers
        if isinstance(target, ast.Name)
        and (
            (isinstance(it, ast.Call) and _last(it.func) == "range")
            or (
                isinstance(it, (ast.Tuple, ast.List))
                and len(it.elts) >= _SWEEP
                and all(isinstance(e, ast.Constant) and type(e.value) in (int, float) for e in it.elts)
            )
        )
    }


_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _number_of(arg: ast.expr, loop_vars: set[str]) -> bool:
    """``float(d)`` / ``int(d)`` of a loop variable: a Python number that changes each iteration."""
    return (
        isinstance(arg, ast.Call)
        and isinstance(arg.func, ast.Name)
        and arg.func.id in ("int", "float")
        and len(arg.args) == 1
        and uses(arg.args[0], loop_vars)
    )


def _float_sweeps(cs: CallSite) -> set[str]:
    """Targets of loops over a literal of several numbers with a float among them (``for lr in [1e-2,
    1e-3]``): learning rates and the like, never a mode chosen on purpose."""
    return {
        name
        for name, values in cs.sweeps.items()
        if len(set(values)) > 1
        and all(type(v) in (int, float) for v in values)
        and any(type(v) is float for v in values)
    }


def _set_from_loop_vars(cs: CallSite, arg: ast.expr, changing: set[str]) -> bool:
    """A name assigned in the loop body, before the call, from the loop variables
    (``lr = float(schedule(step))``)."""
    if not isinstance(arg, ast.Name):
        return False
    for loop in cs.loops:
        for stmt in block_statements(getattr(loop, "body", [])):
            if stmt.lineno >= cs.call.lineno:
                break
            if (
                isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == arg.id for t in stmt.targets)
                and uses(stmt.value, changing)
                and not _clamped(stmt.value, changing)
            ):
                return True
    return False


def _clamped(value: ast.expr, loop_vars: set[str]) -> bool:
    """``min(chunk, n - start)``: a bound that does not change, except at the end (two values)."""
    return (
        isinstance(value, ast.Call)
        and _last(value.func) in ("min", "max")
        and any(not uses(a, loop_vars) for a in value.args)
    )


def _counter_expr(arg: ast.expr, counters: set[str]) -> bool:
    """``n``, ``n + 1``, ``2 * n``: an int derived from a loop counter (not an array built from it)."""
    if isinstance(arg, ast.Name):
        return arg.id in counters
    if isinstance(arg, ast.BinOp):
        sides = (arg.left, arg.right)
        return any(_counter_expr(x, counters) for x in sides) and all(
            isinstance(x, ast.Constant) or _counter_expr(x, counters) for x in sides
        )
    return False
