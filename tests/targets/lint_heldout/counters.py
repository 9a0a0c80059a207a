"""Counters and caches kept in Python state from inside jitted code."""

import jax
import jax.numpy as jnp

_STEP = 0
_HISTORY = []


@jax.jit
def step(x):
    global _STEP
    _STEP += 1  # expect: JS103
    _HISTORY.append("step")  # expect: JS104
    return x * 2


@jax.jit
def normalise(x, stats):
    stats["mean"] = jnp.mean(x)  # expect: JS104
    return x - stats["mean"]
