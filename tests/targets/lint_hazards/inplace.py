"""In-place updates of JAX arrays, also in helpers called from traced code."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


def _zero_padding(x, pad_mask):
    x[pad_mask] = 0.0  # expect: JS204
    return x


def _clip_first(row):
    row[0] = jnp.clip(row[0], -1.0, 1.0)  # expect: JS204
    return row


@jax.jit
def preprocess(x, pad_mask):
    x = _zero_padding(x, pad_mask)
    return jax.vmap(_clip_first)(x)


@jax.jit
def histogram(values):
    counts = jnp.zeros(10)
    for i in range(10):
        counts[i] += jnp.sum(values == i)  # expect: JS204
    return counts


@partial(jax.jit, static_argnums=(1,))
def running_max(xs, n):
    def body(i, acc):
        acc[i] = jnp.maximum(acc[i - 1], xs[i])  # expect: JS204
        return acc

    return lax.fori_loop(1, n, body, jnp.zeros_like(xs))


@jax.jit
def fine(x):
    rows = [x, x * 2]
    rows[0] = x + 1
    return x.at[0].set(1.0), rows
