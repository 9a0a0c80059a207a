"""JS101 `print-in-traced-code`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.lint.context import (
    ModuleContext,
    TracedFunction,
    traced_because,
)
from jitscope.lint.rule import Rule
from jitscope.model.effects import EffectKind
from jitscope.model.lint import Finding

_LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
)


_PRINTERS = frozenset({"pprint.pprint", "pprint.pp", "rich.print", "builtins.print", "tqdm.tqdm.write"})


_STREAM_METHODS = frozenset({"write", "writelines", "flush"})


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
        for facts, call in ctx.calls_in_traced_code():
            what = self._what(ctx, facts, call)
            if what:
                yield ctx.finding(
                    self,
                    call,
                    f"{what} in `{facts.qualname}` runs only while JAX traces it, not on every call"
                    + traced_because(facts),
                    facts.qualname,
                    'use jax.debug.print("{}", value) to print values at run time',
                )

    @staticmethod
    def _what(ctx: ModuleContext, facts: TracedFunction, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name) and func.id == "print" and ctx.is_builtin(facts, "print"):
            return "print()"
        qualified = ctx.qualified_name(func, facts)
        if qualified:
            if qualified in _PRINTERS:
                return f"{qualified}()"
            head, _, last = qualified.rpartition(".")
            if head in ("logging", "absl.logging") and last in _LOG_METHODS:
                return f"{qualified}()"
            if head in ("sys.stdout", "sys.stderr") and last in _STREAM_METHODS:
                return f"{qualified}()"
        if isinstance(func, ast.Attribute) and func.attr in _LOG_METHODS and isinstance(func.value, ast.Name):
            base = func.value.id
            if ctx.is_logger(base) and base not in facts.local_names and base not in facts.closure:
                return f"logging call {base}.{func.attr}()"
        return None
