"""Issue 29 item 8: literal sweeps (JS302, JS304), dict keys (JS202), every caller traced (JS303), and the
columns of dynamic findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.linter.trace_context import Place, TraceContext
from jitscope.linter.registry import find_rule
from tests.lint.helpers import lint

_WRAPPERS = {
    "filter_jit": "import equinox as eqx\n@eqx.filter_jit\ndef step(m, x, lr):\n    return m - lr * x\n",
    "static_argnames": (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='lr')\n"
        "def step(m, x, lr):\n    return m - lr * x\n"
    ),
    "jit_of_lambda": "import jax\nstep = jax.jit(lambda m, x, lr: m - lr * x, static_argnames='lr')\n",
}


def _lines(source: str, code: str) -> list[int]:
    return [f.line for f in lint(source, select=[code])]


@pytest.mark.parametrize("wrapper", sorted(_WRAPPERS))
@pytest.mark.parametrize(
    "loop",
    [
        "    for lr in [1e-2, 5e-3, 1e-3]:\n        m = step(m, x, lr=lr)\n",
        "    rates = (0.1, 0.01)\n    for lr in rates:\n        m = step(m, x, lr=lr)\n",
        "    ms = [step(m, x, lr=lr) for lr in (0.5, 0.25)]\n",
    ],
    ids=["list", "local-name", "comprehension"],
)
def test_a_static_learning_rate_from_a_literal_sweep_is_flagged(wrapper: str, loop: str) -> None:
    source = _WRAPPERS[wrapper] + "def sweep(m, x):\n" + loop + "    return m\n"
    assert _lines(source, "JS302"), source


def test_a_module_constant_sweep_of_floats_is_flagged() -> None:
    source = _WRAPPERS["static_argnames"] + "RATES = [1e-2, 1e-3]\ndef sweep(m, x):\n    for lr in RATES:\n        step(m, x, lr)\n"
    assert _lines(source, "JS302") == [9]


@pytest.mark.parametrize("values", ["('sgd', 'adam')", "(1, 2)", "(0.1,)", "(True, False)"])
def test_a_sweep_of_modes_or_a_single_value_is_not_flagged(values: str) -> None:
    source = _WRAPPERS["static_argnames"] + f"def sweep(m, x):\n    for lr in {values}:\n        step(m, x, lr)\n"
    assert _lines(source, "JS302") == []


_JITTED = "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(v):\n    return v.sum()\n"


@pytest.mark.parametrize(
    "body",
    [
        "    for T in (20, 35):\n        f(jnp.zeros(T))\n",
        "    for T in (20, 35):\n        xs = jax.random.normal(key, (T, 4))\n        f(xs)\n",
        "    for n in [8, 16]:\n        f(jax.random.randint(key, shape=(n,), minval=0, maxval=9))\n",
        "    for n in (8, 16):\n        f(jax.random.bernoulli(key, 0.5, (n, 2)))\n",
        "    for k in (2, 4):\n        f(jnp.ones(8)[:k])\n",
    ],
    ids=["zeros", "random-normal", "randint-shape-keyword", "bernoulli", "slice"],
)
def test_a_shape_from_a_literal_sweep_is_flagged(body: str) -> None:
    assert _lines(_JITTED + "def run(key):\n" + body, "JS304")


@pytest.mark.parametrize(
    "body",
    [
        "    for seed in (0, 1):\n        f(jax.random.normal(jax.random.key(seed), (8, 4)))\n",
        "    for T in (20,):\n        f(jnp.zeros(T))\n",
        "    for scale in (0.5, 2.0):\n        f(jax.random.normal(key, (8,)) * scale)\n",
    ],
    ids=["seeds", "one-value", "scales"],
)
def test_a_sweep_that_keeps_the_shape_is_not_flagged(body: str) -> None:
    assert _lines(_JITTED + "def run(key):\n" + body, "JS304") == []


@pytest.mark.parametrize(
    "loop",
    [
        "for name in sorted(d):",
        "for name in d:",
        "for name in list(d.keys()):",
        "for name in names:",
    ],
)
def test_the_keys_of_a_dict_of_traced_values_are_not_traced(loop: str) -> None:
    source = f"""
    import jax
    @jax.jit
    def f(x, y):
        d = {{"w": x, "b": y}}
        names = sorted(d)
        scale = {{"w": 2.0, "b": 1.0}}
        total = 0.0
        {loop}
            total = total + scale[name] * d[name]
        return total
    """
    assert _lines(source, "JS202") == []


def test_a_loop_that_looks_up_its_iterable_by_its_item_iterates_keys() -> None:
    source = """
    import jax
    @jax.jit
    def f(grads):
        scale = {"w": 2.0, "b": 1.0}
        return sum(scale[name] * grads[name] for name in sorted(grads))
    def g(grads):
        pass
    @jax.jit
    def h(grads):
        scale = {"w": 2.0, "b": 1.0}
        total = 0.0
        for name in grads:
            total = total + scale[name] * grads[name]
        return total
    """
    assert _lines(source, "JS202") == []


def test_items_and_values_of_a_traced_container_are_still_traced() -> None:
    source = """
    import jax
    @jax.jit
    def f(x, idx):
        table = [1, 2, 3]
        d = {"w": x}
        for i in idx:
            x = x + table[i]
        for k, v in d.items():
            x = x + table[k]
        return x
    """
    assert _lines(source, "JS202") == [8]


_BUILDS_A_JIT = """
import jax
from functools import partial
def _inner(v, k):
    return v * k
"""


@pytest.mark.parametrize(
    ("rest", "flagged"),
    [
        # public: callers in other modules (its tests) call it eagerly
        ("def apply(x, k):\n    return jax.jit(partial(_inner, k=k))(x)\n@jax.jit\ndef outer(x):\n    return apply(x, 2.0)\n", True),
        # private, one eager caller here
        ("def _apply(x, k):\n    return jax.jit(partial(_inner, k=k))(x)\n@jax.jit\ndef outer(x):\n    return _apply(x, 2.0)\n"
         "def main(x):\n    return _apply(x, 3.0)\n", True),
        # private, every use traced or handed to jit
        ("def _apply(x, k):\n    return jax.jit(partial(_inner, k=k))(x)\n@jax.jit\ndef outer(x):\n    return _apply(x, 2.0)\n"
         "fast = jax.jit(partial(_apply, k=1.0))\n", False),
        # decorated: every call is traced
        ("@jax.jit\ndef apply(x):\n    return jax.jit(partial(_inner, k=2.0))(x)\n", False),
    ],
    ids=["public", "private-with-an-eager-caller", "private-always-traced", "decorated"],
)
def test_a_fresh_jit_per_call_is_excused_only_when_every_caller_traces(rest: str, flagged: bool) -> None:
    assert bool(_lines(_BUILDS_A_JIT + rest, "JS303")) is flagged


def test_dynamic_findings_have_the_real_column(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("def f(x):\n    y = 'é' + g(x)\n        \n", encoding="utf-8")
    trace = TraceContext("f", Place(str(path), 1, "f"))
    rule = find_rule("JS101")
    assert rule is not None
    line = trace.finding(rule, "m", Place(str(path), 2, "f"))
    assert (line.column, line.end_column) == (5, 19)  # the line's code: `y = 'é' + g(x)`
    # the tracer's byte column (1-based) of `g(x)`: after the two-byte é, the character column is one less
    at = trace.finding(rule, "m", Place(str(path), 2, "f", column=len("    y = 'é' + ".encode()) + 1))
    assert (at.column, at.end_column) == (15, 19)
    blank = trace.finding(rule, "m", Place(str(path), 3, "f"))
    assert (blank.column, blank.end_column) == (1, 2)
