"""What `jitscope lint --fix` rewrites, and what it leaves alone (README: "Fixes: --fix and --diff")."""

import jax
import jax.numpy as jnp


@jax.jit
def step(x, y):
    buf = jnp.zeros(3)
    buf[0] += x.sum()
    if x.sum() > 0:
        z = x + y
    else:
        z = x - y
    print("z =", z)
    return z, buf


@jax.jit
def relu(x):
    if x > 0:
        return x
    return 0.0
