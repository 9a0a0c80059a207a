"""Host-style in-place updates in helpers that traced code calls."""

import jax
import jax.numpy as jnp


def zero_diagonal(m):
    idx = jnp.arange(m.shape[0])
    m[idx, idx] = 0.0  # expect: JS204
    return m


def clip_negative(x):
    x[x < 0] = 0.0  # expect: JS204
    return x


def scatter_counts(counts, labels):
    for c in range(counts.shape[0]):
        counts[c] += jnp.sum(labels == c)  # expect: JS204
    return counts


@jax.jit
def affinity(x, labels):
    sim = x @ x.T
    sim = zero_diagonal(sim)
    sim = clip_negative(sim)
    counts = scatter_counts(jnp.zeros(4), labels)
    return sim / counts.sum()
