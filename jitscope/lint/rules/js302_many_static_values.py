"""JS302 `many-static-values`: docs, examples and static check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.lint.context import (
    CallSite,
    JitSite,
    ModuleContext,
    argument_for,
    block_statements,
    param_defaults,
    static_params,
    uses,
)
from jitscope.lint.rule import Rule
from jitscope.model.lint import Finding


def _site_name(ctx: ModuleContext, site: JitSite) -> str:
    return ctx.name_of(site.target) if site.target is not None else (site.bound_name or "function")


def _where(ctx: ModuleContext, cs: CallSite) -> str:
    return ctx.name_of(cs.function) if cs.function is not None else "<module>"


def _data_derived(node: ast.AST) -> bool:
    """Contains ``.item()``/``.tolist()`` -- except as an index (``table[i.item()]`` picks one of a few values)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("item", "tolist")
    ):
        return True
    if isinstance(node, ast.Subscript):
        return _data_derived(node.value)
    return any(_data_derived(child) for child in ast.iter_child_nodes(node))


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
    pass a loop variable or a value computed from array data (`.item()`, `.tolist()`,
    `float(...)`) as a static argument.

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
    )
    good = (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='mode')\ndef f(x, mode):\n    return x if mode == 'a' else -x\ndef g(x):\n    for mode in ('a', 'b'):\n        x = f(x, mode=mode)\n    return x\n",
        "import jax\n@jax.jit\ndef f(x, step):\n    return x * step\ndef train(x):\n    for step in range(100):\n        x = f(x, step)\n    return x\n",
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
            static = static_params(cs.site)
            for param, arg in argument_for(cs.site, cs.call).items():
                if param not in static:
                    continue
                why = None
                if cs.in_loop and uses(arg, cs.loop_vars):
                    why = "changes on every loop iteration"
                elif _data_derived(arg) or _data_derived_name(cs, arg):
                    why = "is computed from array data"
                if why:
                    yield ctx.finding(
                        self,
                        arg,
                        f"static argument `{param}` of jitted `{ctx.jitted_name(cs.site)}` "
                        f"{why}: one compilation per distinct value",
                        ctx.caller_name(cs),
                        "pass it as a traced argument, or bucket its values",
                    )
