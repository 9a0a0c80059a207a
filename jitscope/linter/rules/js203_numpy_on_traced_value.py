"""JS203 `numpy-on-traced-value`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

from collections.abc import Iterator

from jitscope.linter.context import (
    ModuleContext,
    is_static_result,
    traced_because,
)
from jitscope.linter.rule import TracedValueRule
from jitscope.model.lint import Finding


class NumpyOnTracedValue(TracedValueRule):
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
    failure_kinds = frozenset({"array_conversion"})
    bad = (
        "import jax, numpy as np\n@jax.jit\ndef f(x):\n    return np.sin(x)\n",
        "import jax, numpy as np\n@jax.jit\ndef f(x):\n    y = x * 2\n    return np.asarray(y).sum()\n",
    )
    good = (
        "import jax, numpy as np\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    n = np.prod(x.shape)\n    return jnp.sin(x) * np.float32(2.0) / n + np.finfo(x.dtype).eps\n",
        "import numpy as np\ndef g(x):\n    return np.sin(x)\n",
    )

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts, call in ctx.calls_in_traced_code():
            qualified = ctx.qualified_name(call.func, facts)
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
