"""JS103 `global-write-in-traced-code`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from jitscope.linter.context import (
    ModuleContext,
    traced_because,
)
from jitscope.linter.rule import TracedCodeRule
from jitscope.model.effects import EffectKind
from jitscope.model.lint import Finding

if TYPE_CHECKING:  # the tracer's records: imported only by lint --trace, not by static lint
    from jitscope.linter.trace_context import TraceContext

_ASSIGNMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign)


class GlobalWriteInTracedCode(TracedCodeRule):
    """Write to a global, a nonlocal or a module attribute inside traced code.

    ## What it does
    Flags assignments to names declared `global` or `nonlocal`, and assignments to
    attributes of imported modules, inside a traced function.

    ## Why is this bad?
    The write happens once, while tracing. Calls that hit the compilation cache do not
    update the variable, so counters, flags and caches silently stop changing.

    ## Example
    ```python
    calls = 0

    @jax.jit
    def step(x):
        global calls
        calls += 1
        return x + 1
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(x, calls):
        return x + 1, calls + 1
    ```
    """

    code = "JS103"
    name = "global-write-in-traced-code"
    severity = "error"
    summary = (
        "writes to global/nonlocal names or module attributes inside traced code happen only at trace time"
    )
    bad = (
        "import jax\ncalls = 0\n@jax.jit\ndef f(x):\n    global calls\n    calls += 1\n    return x\n",
        "import jax\nlast_seen = None\n@jax.jit\ndef f(x):\n    global last_seen\n    last_seen = 'f'\n    return x\n",
        "import jax\nimport config\n@jax.jit\ndef f(x):\n    config.seen = True\n    return x\n",
        "from jax import lax\ndef run(xs):\n    n = 0\n    def body(c, x):\n        nonlocal n\n        n += 1\n        return c, x\n    return lax.scan(body, 0, xs)\n",
    )
    good = (
        "import jax\ncalls = 0\ndef count():\n    global calls\n    calls += 1\n",
        "import jax\n@jax.jit\ndef f(x):\n    total = 0\n    total += 1\n    return x + total\n",
        "import jax\ndef outer(x):\n    tree = None\n    @jax.custom_jvp\n    def g(v):\n        nonlocal tree\n        tree = jax.tree_util.tree_structure(v)\n        return v\n    return g(x), tree\n",
    )

    effect_kinds = frozenset({EffectKind.GLOBAL_WRITE})

    def check_trace(self, trace: TraceContext) -> Iterator[Finding]:
        for effect in trace.effects:
            # a method call that mutates a global container is JS104, not a rebinding of the name
            if effect.kind in self.effect_kinds and "() on " not in effect.detail:
                yield trace.effect_finding(self, effect)

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            declared = facts.globals_declared | facts.nonlocals_declared
            for node, _ in ctx.body_nodes(facts, _ASSIGNMENTS):
                targets: list[ast.expr] = []
                value: ast.expr | None = None
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets, value = [node.target], node.value
                if value is not None and facts.is_traced(value):
                    continue  # JS107 reports traced values that escape
                for target in targets:
                    if isinstance(target, ast.Name) and target.id in declared:
                        kind = "global" if target.id in facts.globals_declared else "nonlocal"
                        if kind == "nonlocal" and not isinstance(node, ast.AugAssign):
                            continue  # recording a value for the enclosing function (done once per trace)
                        yield ctx.finding(
                            self,
                            target,
                            f"`{facts.qualname}` writes {kind} `{target.id}`; the write happens only while tracing"
                            + traced_because(facts),
                            facts.qualname,
                            "return the new value from the function instead of writing shared state",
                        )
                    elif isinstance(target, ast.Attribute) and ctx.origin(facts, target.value) == "module":
                        yield ctx.finding(
                            self,
                            target,
                            f"`{facts.qualname}` sets module attribute `{ast.unparse(target)}`; this happens only "
                            "while tracing" + traced_because(facts),
                            facts.qualname,
                            "set configuration before calling the jitted function",
                        )
