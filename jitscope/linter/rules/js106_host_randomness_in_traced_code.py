"""JS106 `host-randomness-in-traced-code`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

from collections.abc import Iterator

from jitscope.linter.context import (
    ModuleContext,
    traced_because,
)
from jitscope.linter.rule import TracedCodeRule
from jitscope.model.effect_catalogue import effect_of_call
from jitscope.model.effects import EffectKind
from jitscope.model.lint import Finding


class HostRandomnessInTracedCode(TracedCodeRule):
    """Host randomness or clock inside traced code.

    ## What it does
    Flags calls to Python's `random`, `numpy.random`, `secrets`, `time.time()` and
    other clocks, `datetime.now()`, `uuid` and `os.urandom` inside a traced function.

    ## Why is this bad?
    The value is drawn once, while tracing, and baked into the compiled computation
    as a constant: every later call reuses the same "random" number or timestamp.

    ## Example
    ```python
    @jax.jit
    def dropout(x):
        keep = np.random.rand(*x.shape) > 0.1
        return jnp.where(keep, x, 0.0)
    ```

    ## Use instead
    ```python
    @jax.jit
    def dropout(key, x):
        keep = jax.random.bernoulli(key, 0.9, x.shape)
        return jnp.where(keep, x, 0.0)
    ```
    """

    code = "JS106"
    name = "host-randomness-in-traced-code"
    severity = "error"
    summary = "host random numbers, clocks and uuids inside traced code are frozen at trace time"
    effect_kinds = frozenset({EffectKind.RANDOMNESS, EffectKind.CLOCK})
    bad = (
        "import jax, numpy as np\n@jax.jit\ndef f(x):\n    return x + np.random.rand()\n",
        "import jax, random\n@jax.jit\ndef f(x):\n    return x * random.random()\n",
        "import jax, time\n@jax.jit\ndef f(x):\n    t = time.time()\n    return x + t\n",
        "import jax\nfrom datetime import datetime\n@jax.jit\ndef f(x):\n    stamp = datetime.now()\n    return x\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(key, x):\n    return x + jax.random.normal(key, x.shape)\n",
        "import jax\nfrom jax import random\n@jax.jit\ndef f(key, x):\n    return x + random.uniform(key)\n",
        "import time\ndef timed(f, x):\n    t = time.time()\n    return f(x), time.time() - t\n",
    )

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts, call in ctx.calls_in_traced_code():
            qualified = ctx.qualified_name(call.func, facts)
            if not qualified:
                continue
            if effect_of_call(qualified) in self.effect_kinds:
                yield ctx.finding(
                    self,
                    call,
                    f"`{qualified}()` in `{facts.qualname}` is evaluated once, while tracing, and frozen into the "
                    "compiled computation" + traced_because(facts),
                    facts.qualname,
                    "use jax.random with a key passed in as an argument; pass times and ids as arguments",
                )
