"""tests/targets/doctor/jit_in_loop.py fixed by hand as doctor says: the jit built once, outside the loop."""

import jax
import jax.numpy as jnp

x = jnp.ones((64,))
scale = jax.jit(lambda v: jnp.sin(v) * 2.0 + 1.0)
for i in range(8):
    x = scale(x)
print(float(x.sum()))
