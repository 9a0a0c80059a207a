"""Epoch loops that slice batches by hand: the last batch is shorter."""

import math

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def train_step(params, xb, yb):
    grads = jax.grad(lambda p: jnp.mean((xb @ p - yb) ** 2))(params)
    return params - 0.01 * grads


@jax.jit
def predict(params, xb):
    return xb @ params


def epoch(params, x, y, batch_size):
    n_batches = math.ceil(len(x) / batch_size)
    for i in range(n_batches):
        xb = x[i * batch_size : (i + 1) * batch_size]
        yb = y[i * batch_size : (i + 1) * batch_size]
        params = train_step(params, xb, yb)  # expect: JS304
    return params


def predict_all(params, x, batch_size):
    preds = []
    start = 0
    while start < len(x):
        preds.append(predict(params, x[start : start + batch_size]))  # expect: JS304
        start += batch_size
    return jnp.concatenate(preds)


def iterate_minibatches(x, y, batch_size):
    for start in range(0, x.shape[0], batch_size):
        end = min(start + batch_size, x.shape[0])
        yield x[start:end], y[start:end]


def epoch_from_generator(params, x, y):
    for xb, yb in iterate_minibatches(x, y, 128):
        params = train_step(params, xb, yb)  # expect: JS304
    return params


def sharded_predict(params, x, n_shards):
    return [predict(params, shard) for shard in np.array_split(x, n_shards)]  # expect: JS304
