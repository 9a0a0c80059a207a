"""The marker and ``jit_compiles`` on small real models: an equinox ``filter_jit`` step with an optax state, flax."""

from __future__ import annotations

import jax  # noqa: F401 - imported here so pytester's in-process runs keep it (re-importing jaxlib aborts)
import pytest

from tests.test_pytest_plugin import PLUGIN

pytest_plugins = ["pytester"]

EQUINOX = """
import equinox as eqx, jax, jax.numpy as jnp, optax, pytest

OPTIMIZER = optax.adam(1e-3)

@eqx.filter_jit
def train_step(model, opt_state, x, y):
    def loss(m):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)
    grads = eqx.filter_grad(loss)(model)
    updates, opt_state = OPTIMIZER.update(grads, opt_state)
    return eqx.apply_updates(model, updates), opt_state

def train(sizes):
    model = eqx.nn.MLP(4, 2, 8, 2, key=jax.random.PRNGKey(0))
    opt_state = OPTIMIZER.init(eqx.filter(model, eqx.is_array))
    for n in sizes:
        model, opt_state = train_step(model, opt_state, jnp.ones((n, 4)), jnp.zeros((n, 2)))

@pytest.mark.jitscope(max_compiles=1)
def test_steady():
    train([16, 16, 16])

@pytest.mark.jitscope(max_compiles=1)
def test_ragged_last_batch():
    train([16, 16, 5])

def test_counted(jit_compiles):
    train([16, 16])
    assert jit_compiles.count("train_step") == 1
"""


@pytest.mark.models
def test_marker_on_an_equinox_step_with_an_optax_state(pytester: pytest.Pytester) -> None:
    pytest.importorskip("equinox")
    pytest.importorskip("optax")
    pytester.makepyfile(test_eqx=EQUINOX)
    # test_counted first, then the same shapes again in test_steady: both are charged their compile
    result = pytester.runpytest_inprocess(*PLUGIN, "-q", "test_eqx.py::test_counted", "test_eqx.py::test_steady",
                                          "test_eqx.py::test_ragged_last_batch", "--jitscope")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "jitscope: train_step compiled 2 times (max_compiles=1)" in out
    assert "compile 2 from test_eqx.py:17: x: shape (16, 4) -> (5, 4); y: shape (16, 2) -> (5, 2) (vs compile 1)" \
        in out
    rows = {line.split()[-1].rsplit("::", 1)[-1]: int(line.split()[0]) for line in
            out[out.index("jitscope: JAX compiles per test"):].splitlines()[1:4]}
    assert rows == {"test_counted": 1, "test_steady": 1, "test_ragged_last_batch": 2}


@pytest.mark.models
def test_marker_on_flax_nnx_and_linen_steps(pytester: pytest.Pytester) -> None:
    pytest.importorskip("flax.nnx")
    pytest.importorskip("flax.linen")
    pytest.importorskip("optax")
    pytester.makepyfile(test_flax="""
import jax, jax.numpy as jnp, optax, pytest
from flax import linen as nn, nnx

@pytest.mark.jitscope(max_compiles=1)
def test_nnx_forward():
    model = nnx.Linear(4, 2, rngs=nnx.Rngs(0))

    @nnx.jit
    def forward(model, x):
        return model(x).sum()

    for n in (8, 8, 3):
        forward(model, jnp.ones((n, 4)))

@pytest.mark.jitscope(max_compiles=1)
def test_linen_train_step():
    model = nn.Dense(2)
    params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 4)))
    optimizer = optax.adam(1e-3)
    opt_state = optimizer.init(params)

    @jax.jit
    def step(params, opt_state, x):
        grads = jax.grad(lambda p: model.apply(p, x).sum())(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    for _ in range(3):
        params, opt_state = step(params, opt_state, jnp.ones((8, 4)))
""")
    result = pytester.runpytest_inprocess(*PLUGIN, "-q")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "jitscope: test_nnx_forward.<locals>.forward compiled 2 times (max_compiles=1)" in out
    assert "x: shape (8, 4) -> (3, 4) (vs compile 1)" in out
