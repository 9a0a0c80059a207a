"""JS107 `tracer-leak`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    ModuleContext,
    traced_because,
)
from jitscope.linter.rule import TracedCodeRule
from jitscope.model.lint import Finding

_ESCAPES = ("self", "global", "closure")
#: the nodes _check looks at: assignments, and calls (setattr, mutating methods)
_WRITING = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Call)


class TracerLeak(TracedCodeRule):
    """A traced value stored where it outlives the traced call.

    ## What it does
    Flags traced values stored on `self`, in module globals, in closed-over
    containers, or in `global`/`nonlocal` variables from inside a traced function.

    ## Why is this bad?
    The stored object is a tracer. Using it after tracing ends raises
    `UnexpectedTracerError`, often far away from where it leaked.

    ## Example
    ```python
    class Model:
        @functools.partial(jax.jit, static_argnums=0)
        def __call__(self, x):
            self.last = x * 2
            return self.last
    ```

    ## Use instead
    ```python
    class Model:
        @functools.partial(jax.jit, static_argnums=0)
        def __call__(self, x):
            return x * 2   # return values instead of storing them
    ```
    """

    code = "JS107"
    name = "tracer-leak"
    severity = "error"
    summary = "traced values stored on self, in globals or closed-over containers outlive the trace"
    failure_kinds = frozenset({"tracer_leak"})
    bad = (
        "import jax\nfrom functools import partial\nclass M:\n    @partial(jax.jit, static_argnums=0)\n    def f(self, x):\n        self.last = x\n        return x\n",
        "import jax\ncache = {}\n@jax.jit\ndef f(x):\n    cache['x'] = x * 2\n    return x\n",
        "import jax\nfrom jax import lax\n@jax.jit\ndef f(xs):\n    seen = []\n    def body(c, x):\n        seen.append(x)\n        return c + x, x\n    return lax.scan(body, 0.0, xs)\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(xs):\n    parts = []\n    def add(v):\n        parts.append(v)\n    add(xs)\n    return parts\n",
        "import jax\n@jax.jit\ndef f(x):\n    out = {}\n    out['y'] = x * 2\n    return out\n",
    )

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            escapes = set(_ESCAPES)
            if facts.boundary:
                escapes.add("closure-fresh")
            declared = facts.globals_declared | facts.nonlocals_declared
            for node, parent in ctx.body_nodes(facts, _WRITING):
                target: ast.expr | None = None
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    if node.value is None or not facts.is_traced(node.value):
                        continue
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Subscript) and ctx.is_ref_write(t):
                            continue
                        if (
                            isinstance(t, ast.Name)
                            and t.id in declared
                            or isinstance(t, (ast.Attribute, ast.Subscript))
                            and ctx.origin(facts, t.value) in escapes
                        ):
                            target = t
                elif (setter := ctx.setattr_call(facts, node, parent)) is not None:
                    args = setter.args
                    if len(args) > 2 and facts.is_traced(args[2]) and ctx.origin(facts, args[0]) in escapes:
                        target = args[0]
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(parent, ast.Expr)
                    and isinstance(node.func, ast.Attribute)
                ):
                    if not ctx.mutates(facts, node) or ctx.origin(facts, node.func.value) not in escapes:
                        continue
                    if any(facts.is_traced(a) for a in (*node.args, *(k.value for k in node.keywords))):
                        target = node.func.value
                if target is None:
                    continue
                yield ctx.finding(
                    self,
                    node,
                    f"`{facts.qualname}` stores a traced value in `{ast.unparse(target)}`, which outlives the trace; "
                    "using it later raises UnexpectedTracerError" + traced_because(facts),
                    facts.qualname,
                    "return the value from the traced function instead of storing it",
                )
