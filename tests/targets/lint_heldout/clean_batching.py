"""Batch loops whose shapes never change: drop the remainder or pad it."""

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def train_step(params, xb):
    return params - 0.01 * jnp.mean(xb, axis=0)


def epoch(params, x, batch_size):
    n_batches = len(x) // batch_size
    for i in range(n_batches):
        params = train_step(params, x[i * batch_size : (i + 1) * batch_size])
    return params


def epoch_padded(params, x, batch_size):
    for start in range(0, len(x), batch_size):
        xb = x[start : start + batch_size]
        if len(xb) < batch_size:
            xb = np.pad(xb, ((0, batch_size - len(xb)), (0, 0)))
        params = train_step(params, xb)
    return params


def epoch_reshaped(params, x, batch_size):
    usable = (len(x) // batch_size) * batch_size
    for xb in x[:usable].reshape(-1, batch_size, x.shape[-1]):
        params = train_step(params, xb)
    return params


def rolling(params, frames, window):
    buffer = jnp.zeros((window, frames.shape[-1]))
    for frame in frames:
        buffer = jnp.concatenate([buffer[1:], frame[None]])
        params = train_step(params, buffer)
    return params
