"""``run_overhead.py --model scan-rnn``: an Elman RNN over a sequence with ``jax.lax.scan``, trained with optax
sgd under ``jax.jit``, params as a dict (ends with ``state`` and ``step(state) -> state``, as every
``train_*.py`` here)."""

import jax
import jax.numpy as jnp
import optax

SEQ, BATCH, D_IN, HIDDEN = 32, 16, 8, 64


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {"w_in": jax.random.normal(k1, (D_IN, HIDDEN)) * 0.1,
            "w_h": jax.random.normal(k2, (HIDDEN, HIDDEN)) * 0.1,
            "w_out": jax.random.normal(k3, (HIDDEN, 1)) * 0.1}


def loss_fn(params, xs, ys):
    def cell(h, x):
        h = jnp.tanh(x @ params["w_in"] + h @ params["w_h"])
        return h, h @ params["w_out"]

    _, preds = jax.lax.scan(cell, jnp.zeros((BATCH, HIDDEN)), xs)
    return jnp.mean((preds - ys) ** 2)


optim = optax.sgd(1e-2, momentum=0.9)


@jax.jit
def train_step(params, opt_state, xs, ys):
    loss, grads = jax.value_and_grad(loss_fn)(params, xs, ys)
    updates, opt_state = optim.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


xs = jax.random.normal(jax.random.PRNGKey(1), (SEQ, BATCH, D_IN))
ys = jax.random.normal(jax.random.PRNGKey(2), (SEQ, BATCH, 1))
params = init(jax.random.PRNGKey(0))


def step(state):
    params, opt_state, _ = train_step(*state, xs, ys)
    return params, opt_state


state = (params, optim.init(params))
