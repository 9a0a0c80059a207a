"""JS306 `dynamic-recompilation`: docs, examples and `jitscope lint --trace` check (no static check)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from jitscope.linter.rule import Rule
from jitscope.model.lint import Finding

if TYPE_CHECKING:  # the tracer's records: imported only by lint --trace, not by static lint
    from jitscope.linter.trace_context import TraceContext


class DynamicRecompilation(Rule):
    """Recompilation observed while tracing a call sequence (dynamic).

    ## What it does
    Only `jitscope lint --trace TARGET` checks this: it runs a described sequence of
    calls through jitscope's tracer, counts compilations, and for every recompilation
    reports each component of the cache key that differs from the nearest previous
    compilation: shape, dtype, weak type, static value, pytree structure, keyword vs
    positional argument.

    ## Why is this bad?
    Each recompilation costs a full trace and XLA compile. Unexpected ones (a Python
    scalar one call and an array the next, a float static argument) make "fast" jitted
    code slow, and JAX's own explanation names only its single closest guess.

    ## Example
    ```python
    @jax.jit
    def f(x, scale):
        return x * scale

    f(x, 2.0)               # weak-typed float32 scalar
    f(x, jnp.float32(2.0))  # strongly typed: compiles again
    ```

    ## Use instead
    ```python
    f(x, jnp.float32(2.0))
    f(x, jnp.float32(3.0))  # same types every call: one compilation
    ```
    """

    code = "JS306"
    name = "dynamic-recompilation"
    severity = "warning"
    summary = "recompilation observed while tracing a call sequence, with every differing cache-key component"
    dynamic_only = True
    bad = (
        "import jax, jax.numpy as jnp\n@jax.jit\ndef f(x, s):\n    return x * s\nf(jnp.ones(3), 2.0)\nf(jnp.ones(3), jnp.float32(2.0))\n",
    )
    good = (
        "import jax, jax.numpy as jnp\n@jax.jit\ndef f(x, s):\n    return x * s\nf(jnp.ones(3), 2.0)\nf(jnp.ones(3), 3.0)\n",
    )

    def check_trace(self, trace: TraceContext) -> Iterator[Finding]:
        for call in trace.recompilations:
            if call.unexplained:
                message = (
                    f"call {call.index} of {trace.calls} ({call.call}) recompiled {trace.target} with a key "
                    f"identical to call {call.nearest}'s: JAX evicted the entry, or the key has a component "
                    "jitscope does not model"
                )
                yield trace.finding(self, message, trace.definition)
                continue
            causes = "; ".join(call.causes) or "no difference in the arguments (hidden state?)"
            confirmed = (
                "" if call.observed is None else " (confirmed: the body ran again)" if call.observed else ""
            )
            message = (
                f"call {call.index} of {trace.calls} ({call.call}) recompiles {trace.target}{confirmed}; "
                f"differs from call {call.nearest} in: {causes}"
            )
            yield trace.finding(
                self,
                message,
                trace.definition,
                "keep shapes, dtypes, weak types, pytree structure, static values and the call form stable",
            )
