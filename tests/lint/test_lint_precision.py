"""Which code counts as traced, which values are traced: no false positives on correct code,
and the hazards still found through aliases, partials, helpers, lax bodies and methods."""

from __future__ import annotations

import pytest

from tests.lint.helpers import codes, lint

QUIET = {
    "shape-and-ndim": """
        import jax, jax.numpy as jnp
        @jax.jit
        def f(x):
            n, m = x.shape
            if x.ndim == 2 and x.shape[0] > 1 and x.size:
                x = x.reshape(n * m)
            for i in range(len(x)):
                x = x + i
            return jnp.zeros(x.shape) + x.dtype.itemsize
    """,
    "static-loop-unroll": """
        import jax
        @jax.jit
        def f(xs):
            total = 0.0
            for i, x in enumerate(xs):
                if i == 0:
                    total = x
                else:
                    total = total + x
            return total
    """,
    "static-argnames-and-defaults": """
        import jax
        from functools import partial
        @partial(jax.jit, static_argnames=("n", "mode"))
        def f(x, n: int, mode="fast", training=False):
            for _ in range(n):
                x = x * 2
            if mode == "fast" and not training:
                return x
            return -x
    """,
    "is-none-and-isinstance": """
        import jax
        @jax.jit
        def f(x, bias=None, scale=1.0):
            if bias is not None:
                x = x + bias
            if isinstance(scale, (int, float)) and scale != 1.0:
                x = x * scale
            return x
    """,
    "untraced-helper-arguments": """
        import jax
        def helper(v, k, axis=0):
            if k > 1 and axis == 0:
                return v * k
            return v
        @jax.jit
        def f(x):
            return helper(x, 3) + helper(x, 1, axis=1)
    """,
    "helper-returning-static": """
        import jax
        def size_of(v):
            return v.shape[0]
        @jax.jit
        def f(x):
            for i in range(size_of(x)):
                x = x + i
            return x
    """,
    "python-containers": """
        import jax
        @jax.jit
        def f(x):
            parts = []
            cache = {}
            for i in range(3):
                parts.append(x * i)
                cache[i] = x
            if parts and cache:
                return parts[-1]
            return x
    """,
    "vmap-in-axes-none": """
        import jax
        def g(x, n):
            if n > 2:
                return x * n
            return x
        h = jax.vmap(g, in_axes=(0, None))
    """,
    "untraced-code": """
        import numpy as np, time
        def g(x):
            print(x)
            if x > 0:
                return float(np.sum(x)) + time.time()
            return int(x)
    """,
    "host-callback-body": """
        import jax
        def log(x):
            print(x)
            with open("log.txt", "a") as fh:
                fh.write(str(x))
        @jax.jit
        def f(x):
            jax.debug.callback(log, x)
            return x
    """,
    "debug-print": """
        import jax
        @jax.jit
        def f(x):
            jax.debug.print("x={x}", x=x)
            return x
    """,
    "lax-cond-with-static-closure": """
        import jax
        from jax import lax
        from functools import partial
        @partial(jax.jit, static_argnames="flag")
        def f(x, flag):
            def yes(v):
                return v * 2 if flag else v
            return lax.cond(x.sum() > 0, yes, lambda v: v, x)
    """,
    "tree-map-static-mask": """
        import jax
        def merge(mask, a, b):
            return jax.tree_util.tree_map(lambda m, x, y: x if m else y, mask, a, b)
    """,
    "pallas-style-ref-writes": """
        import jax
        from jax.experimental import pallas as pl
        def kernel(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2
        def run(x):
            return pl.pallas_call(kernel, out_shape=x)(x)
    """,
    "static-sweep-over-few-values": """
        import itertools, jax
        from functools import partial
        @partial(jax.jit, static_argnames=("causal", "block"))
        def attend(q, causal, block):
            return q
        def sweep(q):
            blocks = (64, 128)
            for causal, block in itertools.product((False, True), blocks):
                attend(q, causal=causal, block=block)
    """,
    "narrowing-inside-or": """
        import jax
        @jax.jit
        def f(x, ddof=0):
            if not isinstance(ddof, int) or ddof != 0:
                raise ValueError(ddof)
            return x
        g = jax.vmap(f)
    """,
    "partial-bound-flag-dead-branch": """
        import jax
        from functools import partial
        def _solve(a, *, numpy_resid):
            rank = a.sum()
            if numpy_resid and rank < 3:
                return a
            return -a
        solve = jax.jit(partial(_solve, numpy_resid=False))
    """,
    "shape-and-dtype-helpers": """
        import jax
        def result_dtype(x):
            return x.dtype
        def _broadcast_shape(a, b):
            return a.shape
        @jax.jit
        def f(x):
            if result_dtype(x) == 'float32' and len(_broadcast_shape(x, x)) == 1:
                return x
            return x
    """,
    "optax-style-update": """
        import jax, optax
        tx = optax.adam(1e-3)
        @jax.jit
        def step(params, grads, state):
            updates, state = tx.update(grads, state, params)
            return optax.apply_updates(params, updates), state
    """,
}

FOUND = {
    "alias-import": (
        "from jax import jit as compile_\n@compile_\ndef f(x):\n    print(x)\n    return x\n",
        "JS101",
    ),
    "partial-functools": (
        (
            "import functools, jax\n@functools.partial(jax.jit, static_argnums=0)\ndef f(n, x):\n"
            "    if x > n:\n        return x\n    return -x\n"
        ),
        "JS201",
    ),
    "assigned-jit": (
        "import jax\ndef g(x, n):\n    return x if x > 0 else n\ngj = jax.jit(g, static_argnums=1)\n",
        "JS201",
    ),
    "pmap": ("import jax\n@jax.pmap\ndef f(x):\n    return float(x)\n", "JS202"),
    "method": (
        (
            "import jax\nfrom functools import partial\nclass M:\n    @partial(jax.jit, static_argnums=0)\n"
            "    def f(self, x):\n        print(x)\n        return x\n"
        ),
        "JS101",
    ),
    "self-method-helper": (
        (
            "import jax\nfrom functools import partial\nclass M:\n    def helper(self, v):\n        return int(v)\n"
            "    @partial(jax.jit, static_argnums=0)\n    def f(self, x):\n        return self.helper(x)\n"
        ),
        "JS202",
    ),
    "fori-loop-body": (
        (
            "from jax import lax\ndef run(n, x):\n    def body(i, c):\n        if c > i:\n            return c\n"
            "        return c + 1\n    return lax.fori_loop(0, n, body, x)\n"
        ),
        "JS201",
    ),
    "while-loop-cond": (
        "from jax import lax\ndef run(x):\n    return lax.while_loop(lambda c: bool(c < 3), lambda c: c + 1, x)\n",
        "JS202",
    ),
    "switch-branches": (
        (
            "import jax.numpy as jnp, numpy as np\nfrom jax import lax\ndef a(x):\n    return np.sin(x)\ndef b(x):\n"
            "    return x\ndef run(i, x):\n    return lax.switch(i, [a, b], x)\n"
        ),
        "JS203",
    ),
    "lax-map": (
        "import time\nfrom jax import lax\ndef run(xs):\n    return lax.map(lambda x: x + time.time(), xs)\n",
        "JS106",
    ),
    "checkpoint": ("import jax\n@jax.checkpoint\ndef f(x):\n    x[0] = 1.0\n    return x\n", "JS204"),
    "remat": ("import jax, random\n@jax.remat\ndef f(x):\n    return x * random.random()\n", "JS106"),
    "custom-jvp": ("import jax\n@jax.custom_jvp\ndef f(x):\n    print(x)\n    return x\n", "JS101"),
    "custom-vjp-bwd": (
        (
            "import jax\n@jax.custom_vjp\ndef f(x):\n    return x\ndef fwd(x):\n    return x, x\ndef bwd(res, g):\n"
            "    if g > 0:\n        return (g,)\n    return (-g,)\nf.defvjp(fwd, bwd)\n"
        ),
        "JS201",
    ),
    "transitive-two-levels": (
        (
            "import jax\ndef inner(v):\n    return v.item()\ndef middle(v):\n    return inner(v * 2)\n"
            "@jax.jit\ndef f(x):\n    return middle(x)\n"
        ),
        "JS202",
    ),
    "nested-closure-scan": (
        (
            "import jax\nfrom jax import lax\n@jax.jit\ndef f(xs, y):\n    def body(c, x):\n        if y > 0:\n"
            "            c = c + x\n        return c, x\n    return lax.scan(body, 0.0, xs)\n"
        ),
        "JS201",
    ),
    "vmap-traced-arg": (
        "import jax\ndef g(x, n):\n    return x if n > 0 else -x\nh = jax.vmap(g)\n",
        "JS201",
    ),
    "list-indexed-by-tracer": (
        "import jax\nTABLE = [1.0, 2.0]\n@jax.jit\ndef f(i):\n    return TABLE[i]\n",
        "JS202",
    ),
}


@pytest.mark.parametrize("name", sorted(QUIET))
def test_correct_code_is_quiet(name: str) -> None:
    assert lint(QUIET[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_hazard_is_found(name: str) -> None:
    source, code = FOUND[name]
    assert code in codes(source)


def test_finding_names_function_and_exact_position() -> None:
    (finding,) = lint(
        """
        import jax
        class Model:
            @jax.jit
            def apply(self, x):
                return x if x.sum() > 0 else -x
        """
    )
    assert finding.code == "JS201"
    assert finding.function == "Model.apply"
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == (6, 21, 6, 32)


def test_columns_count_characters_not_bytes() -> None:
    (finding,) = lint("import jax\n@jax.jit\ndef f(x):\n    é = 1; print(x)\n    return x\n")
    assert finding.column == 12  # 'é' is two bytes in UTF-8 but one column


def test_reassignment_kills_taint() -> None:
    assert (
        lint(
            "import jax\n@jax.jit\ndef f(x):\n    x = x.shape[0]\n    if x > 2:\n        return 1\n    return 0\n"
        )
        == []
    )


def test_branch_taint_merges() -> None:
    source = (
        "import jax\n@jax.jit\ndef f(x, flag: bool):\n    n = 3\n    if flag:\n        n = x\n"
        "    for i in range(n):\n        pass\n    return x\n"
    )
    assert "JS202" in codes(source)
