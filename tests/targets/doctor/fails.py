"""A program that recompiles, then fails."""

import jax
import jax.numpy as jnp


@jax.jit
def f(x):
    return x * 2


for n in range(1, 7):
    f(jnp.ones(n))
raise RuntimeError("the data ran out")
