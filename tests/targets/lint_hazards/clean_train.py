"""A careful training script: fixed shapes, hashable statics, jit outside loops. No findings."""

from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

LAYER_SIZES = (784, 256, 10)
MODES = ("train", "eval")


@partial(jax.jit, static_argnames=("sizes", "mode"))
def forward(params, x, sizes, mode):
    for w, _ in zip(params, sizes, strict=False):
        x = jnp.tanh(x @ w)
    return x if mode == "train" else jax.lax.stop_gradient(x)


@jax.jit
def train_step(params, batch):
    grads = jax.grad(lambda p: jnp.mean(forward(p, batch, LAYER_SIZES, "train") ** 2))(params)
    return [p - 0.01 * g for p, g in zip(params, grads, strict=True)]


@partial(jax.jit, static_argnums=(1,))
def pad_to(x, length):
    return jnp.pad(x, (0, length - x.shape[0]))


@eqx.filter_jit
def smooth(y, window):
    return jnp.convolve(y, jnp.ones(window) / window, mode="same")


def batches(data, batch_size):
    usable = len(data) - len(data) % batch_size
    for start in range(0, usable, batch_size):
        yield data[start : start + batch_size]


def fit(params, data, batch_size, epochs):
    n_batches = len(data) // batch_size
    for _ in range(epochs):
        perm = np.random.permutation(len(data))
        for i in range(n_batches):
            idx = perm[i * batch_size : (i + 1) * batch_size]
            params = train_step(params, data[idx])
        for batch in batches(data, batch_size):
            params = train_step(params, batch)
    return params


def evaluate(params, data):
    outs = []
    for mode in MODES:
        outs.append(forward(params, data, sizes=LAYER_SIZES, mode=mode))
    n = int(data.shape[0])
    outs.append(pad_to(data[0], n))
    return outs


def smooth_all(series):
    return [smooth(jnp.asarray(s), 5) for s in series]


def windows(x, size):
    return [train_step([x], x[i : i + size]) for i in range(0, x.shape[0] - size + 1)]


def fixed_rows(params, table):
    for row in table:
        params = train_step(params, jnp.asarray(row))
    return params


def constants(params):
    for _ in range(10):
        params = train_step(params, jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    return params
