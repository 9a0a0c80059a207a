"""A script that makes its own jit of ``step`` (``f = jax.jit(step, ...)``) and calls only ``f``."""

import jax
import jax.numpy as jnp


def step(x, n):
    return x * n


f = jax.jit(step, static_argnames="n")
for _ in range(3):
    f(jnp.ones(4), 2)
