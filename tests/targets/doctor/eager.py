"""A program with no jit at all: every operation runs op by op."""

import jax.numpy as jnp

total = 0.0
for n in range(1, 9):
    x = jnp.arange(n, dtype=jnp.float32)
    total += float(jnp.sum(jnp.sin(x) * 2))
print(total)
