"""The patterns behind the held-out corpus's first misses (tests/targets/lint_heldout), each as a
pair: the hazard, which must be found, and a sibling that differs in the one way that makes it
fine, which must stay quiet."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jitscope.linter import lint_paths
from tests.lint.helpers import lint

_BATCHES = """
import math
import jax
import numpy as np

@jax.jit
def step(p, xb):
    return p + xb.sum()

"""


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


#: name -> (rule, hazard, quiet sibling)
PAIRS: dict[str, tuple[str, str, str]] = {
    "range-of-rounded-up-batch-count": (
        "JS304",
        _BATCHES
        + _src(
            """
            def epoch(p, x, bs):
                n = math.ceil(len(x) / bs)
                for i in range(n):
                    p = step(p, x[i * bs : (i + 1) * bs])
                return p
            """
        ),
        _BATCHES
        + _src(
            """
            def epoch(p, x, bs):
                n = len(x) // bs
                for i in range(n):
                    p = step(p, x[i * bs : (i + 1) * bs])
                return p
            """
        ),
    ),
    "while-loop-window": (
        "JS304",
        _BATCHES
        + _src(
            """
            def epoch(p, x, bs):
                s = 0
                while s < len(x):
                    p = step(p, x[s : s + bs])
                    s += bs
                return p
            """
        ),
        _BATCHES
        + _src(
            """
            def epoch(p, x, bs):
                s = 0
                while s < len(x) - bs + 1:
                    p = step(p, x[s : s + bs])
                    s += bs
                return p
            """
        ),
    ),
    "generator-of-batches": (
        "JS304",
        _BATCHES
        + _src(
            """
            def batches(x, bs):
                for s in range(0, len(x), bs):
                    yield x[s : min(s + bs, len(x))]
            def epoch(p, x):
                for xb in batches(x, 32):
                    p = step(p, xb)
                return p
            """
        ),
        _BATCHES
        + _src(
            """
            def batches(x, bs):
                for s in range(0, len(x) - len(x) % bs, bs):
                    yield x[s : s + bs]
            def epoch(p, x):
                for xb in batches(x, 32):
                    p = step(p, xb)
                return p
            """
        ),
    ),
    "sliding-window-is-not-growing": (
        "JS304",
        _BATCHES
        + _src(
            """
            def run(p, frames, buf):
                for f in frames:
                    buf = np.concatenate([buf, f[None]])
                    p = step(p, buf)
                return p
            """
        ),
        _BATCHES
        + _src(
            """
            def run(p, frames, buf):
                for f in frames:
                    buf = np.concatenate([buf[1:], f[None]])
                    p = step(p, buf)
                return p
            """
        ),
    ),
    "static-set-in-the-loop": (
        "JS302",
        _src(
            """
            import jax
            from functools import partial
            @partial(jax.jit, static_argnames=('n',))
            def run(x, n):
                return x * n
            def drive(x, total):
                for start in range(0, total, 8):
                    n = float(start) / total
                    x = run(x, n=n)
                return x
            """
        ),
        _src(
            """
            import jax
            from functools import partial
            @partial(jax.jit, static_argnames=('n',))
            def run(x, n):
                return x * n
            def drive(x, total):
                for start in range(0, total, 8):
                    n = min(8, total - start)
                    x = run(x, n=n)
                return x
            """
        ),
    ),
    "closure-factory-as-static": (
        "JS302",
        _src(
            """
            import jax
            from functools import partial
            @partial(jax.jit, static_argnums=(1,))
            def apply(x, fn):
                return fn(x)
            def scaled(k):
                def f(v):
                    return v * k
                return f
            def run(x, k):
                return apply(x, scaled(k))
            """
        ),
        _src(
            """
            import jax
            from functools import partial
            @partial(jax.jit, static_argnums=(1,))
            def apply(x, fn):
                return fn(x)
            def scaled(k):
                return abs
            def run(x, k):
                return apply(x, scaled(k))
            """
        ),
    ),
    "non-frozen-dataclass-as-static": (
        "JS301",
        _src(
            """
            import jax
            from dataclasses import dataclass
            from functools import partial
            @dataclass
            class Cfg:
                k: int
            @partial(jax.jit, static_argnames=('cfg',))
            def f(x, cfg):
                return x * cfg.k
            def run(x):
                return f(x, cfg=Cfg(3))
            """
        ),
        _src(
            """
            import jax
            from dataclasses import dataclass
            from functools import partial
            @dataclass(frozen=True)
            class Cfg:
                k: int
            @partial(jax.jit, static_argnames=('cfg',))
            def f(x, cfg):
                return x * cfg.k
            def run(x):
                return f(x, cfg=Cfg(3))
            """
        ),
    ),
    "jit-of-a-transform-in-a-loop": (
        "JS303",
        _src(
            """
            import jax
            def loss(p, x):
                return (p * x).sum()
            def sweep(p, xs):
                for x in xs:
                    g = jax.jit(jax.grad(loss))
                    p = g(p, x)
                return p
            """
        ),
        _src(
            """
            import jax
            def loss(p, x):
                return (p * x).sum()
            def sweep(p, xs):
                g = jax.jit(jax.grad(loss))
                for x in xs:
                    p = g(p, x)
                return p
            """
        ),
    ),
    "argument-changed-at-the-jit-boundary": (
        "JS104",
        _src(
            """
            import jax
            import jax.numpy as jnp
            @jax.jit
            def f(x, stats):
                stats['mean'] = jnp.mean(x)
                return x
            """
        ),
        _src(
            """
            import jax
            import jax.numpy as jnp
            @jax.jit
            def f(x, stats):
                stats['mean'] = jnp.mean(x)
                return x, stats
            """
        ),
    ),
    "flax-lifted-jit-of-a-module": (
        "JS101",
        _src(
            """
            from flax import linen as nn
            class Block(nn.Module):
                @nn.compact
                def __call__(self, x):
                    print(x)
                    return x
            JitBlock = nn.jit(Block)
            """
        ),
        _src(
            """
            from flax import linen as nn
            class Block(nn.Module):
                @nn.compact
                def __call__(self, x):
                    print(x)
                    return x
            """
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_hazard_is_found(name: str) -> None:
    code, hazard, _ = PAIRS[name]
    assert code in [f.code for f in lint(hazard)]


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_quiet_sibling(name: str) -> None:
    code, _, quiet = PAIRS[name]
    assert code not in [f.code for f in lint(quiet)]


_FACTORIES = """
import jax
from functools import partial

def compiled(fn):
    return jax.jit(fn, static_argnames=("n",))

def jit_config(fn, names=("cfg",)):
    return partial(jax.jit, static_argnames=names)(fn)
"""

_USERS = """
from pkg.factories import compiled, jit_config

@compiled
def rollout(s, n):
    for _ in range(n):
        s = s + 1
    return s

def _apply(x, cfg):
    return x * cfg[0]

apply = jit_config(_apply)

def run(s, x, horizon):
    for n in range(horizon):
        s = rollout(s, n=n)
    return s, apply(x, cfg=[1.0])
"""


def test_jit_factories_in_another_module(tmp_path: Path) -> None:
    """Factories that hard-code static_argnames (also through a parameter's literal default), used
    as a decorator or a call in another module: their static arguments are checked there."""
    for name, text in {"pkg/__init__.py": "", "pkg/factories.py": _FACTORIES, "pkg/users.py": _USERS}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    report = lint_paths([tmp_path], root=tmp_path, jobs=1)
    found = {(Path(f.file).name, f.code) for f in report.findings}
    assert found == {("users.py", "JS302"), ("users.py", "JS301")}


def test_many_static_values_is_one_finding_per_call() -> None:
    """``simulate(model, y0, n, 1.0 / n)`` in a sweep recompiles once per iteration, not twice."""
    source = """
    import equinox as eqx

    @eqx.filter_jit
    def simulate(y0, n_substeps, dt):
        for _ in range(n_substeps):
            y0 = y0 * dt
        return y0

    def sweep(y0):
        return [simulate(y0, n, 1.0 / n) for n in range(1, 50)]
    """
    (finding,) = [f for f in lint(source) if f.code == "JS302"]
    assert "`n_substeps`" in finding.message
    assert "(also `dt`)" in finding.message
