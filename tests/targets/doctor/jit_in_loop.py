"""A loop that builds its jit again on every step (a new function object each time)."""

import jax
import jax.numpy as jnp

x = jnp.ones((64,))
for i in range(8):
    scale = jax.jit(lambda v: jnp.sin(v) * 2.0 + 1.0)
    x = scale(x)
print(float(x.sum()))
