"""JS101 `print-in-traced-code`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    ModuleContext,
    TracedFunction,
)
from jitscope.linter.rule import Rule
from jitscope.model.effect_catalogue import LOG_METHODS
from jitscope.model.effects import EffectKind
from jitscope.model.lint import Finding


class PrintInTracedCode(Rule):
    """Print or log inside traced code.

    ## What it does
    Flags `print`, `pprint`, `logging` calls and writes to `sys.stdout`/`sys.stderr`
    inside a function that JAX traces (jit, vmap, a lax control-flow body, ...).

    ## Why is this bad?
    The call runs once, while JAX traces the function, and prints tracers such as
    `Traced<ShapedArray(float32[3])>` instead of values. Later calls run the compiled
    computation and print nothing.

    ## Example
    ```python
    @jax.jit
    def step(x):
        print("x =", x)
        return x * 2
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(x):
        jax.debug.print("x = {}", x)
        return x * 2
    ```
    """

    code = "JS101"
    name = "print-in-traced-code"
    severity = "warning"
    summary = "print, logging or sys.stdout/stderr writes inside traced code run only while tracing"
    effect_kinds = frozenset({EffectKind.PRINT, EffectKind.STDOUT, EffectKind.LOGGING})
    bad = (
        "import jax\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n",
        "import logging\nimport jax\nlog = logging.getLogger(__name__)\n@jax.jit\ndef f(x):\n    log.info('x=%s', x)\n    return x\n",
        "import sys\nfrom jax import lax\ndef body(c, x):\n    sys.stdout.write('step')\n    return c + x, x\ndef run(xs):\n    return lax.scan(body, 0.0, xs)\n",
        "import jax\ndef helper(x):\n    print('helper', x)\n    return x + 1\n@jax.jit\ndef f(x):\n    return helper(x)\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(x):\n    jax.debug.print('x = {}', x)\n    return x\n",
        "import jax\ndef g(x):\n    print(x)\n    return x\n",
        "import jax\ndef host(x):\n    print(x)\n@jax.jit\ndef f(x):\n    jax.debug.callback(host, x)\n    return x\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        return self.call_findings(ctx, lambda facts, call: self._what(ctx, facts, call),
                                  "runs only while JAX traces it, not on every call",
                                  'use jax.debug.print("{}", value) to print values at run time')

    def _what(self, ctx: ModuleContext, facts: TracedFunction, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name) and (wrapped := ctx.partial_of(facts, func.id)) is not None:
            inner = self._called(ctx, facts, wrapped)
            if inner:
                return f"{func.id}() (functools.partial of {inner})"
        if not ctx.runs_on_host(func, facts):
            # `jax.tree_util.tree_map(print, grads)`, `list(map(print, xs))`: called while tracing
            for arg in call.args:
                handed = self._called(ctx, facts, arg)
                if handed:
                    return f"{handed} handed to {ast.unparse(func)}()"
        return self._called(ctx, facts, func)

    def _called(self, ctx: ModuleContext, facts: TracedFunction, func: ast.expr) -> str | None:
        """What calling ``func`` prints (``print()``, ``logging.info()``...), or None."""
        catalogued = self.catalogued_call(ctx, facts, func)
        if catalogued:
            return catalogued
        if isinstance(func, ast.Attribute) and func.attr in LOG_METHODS and isinstance(func.value, ast.Name):
            base = func.value.id
            if ctx.is_logger(base) and base not in facts.local_names and base not in facts.closure:
                return f"logging call {base}.{func.attr}()"
        return None
