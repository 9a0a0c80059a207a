"""tests/targets/doctor/unrolled.py fixed by hand as doctor says: the loop written with lax.fori_loop."""

import jax
import jax.numpy as jnp


@jax.jit
def step(w, x):
    x = jax.lax.fori_loop(0, 600, lambda i, x: jnp.tanh(x @ w) + x, x)
    return x.sum()


w = jnp.ones((32, 32)) / 32
print(float(step(w, jnp.ones((8, 32)))))
