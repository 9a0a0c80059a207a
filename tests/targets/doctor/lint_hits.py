"""A static learning rate from a Python list (lint's JS302 sees it before any run) and a lookup table
closed over by a jitted function (JS307: embedded in the compiled program as a constant)."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

TABLE = np.ones((1024, 1024), np.float32)


@jax.jit
def lookup(i):
    return jnp.asarray(TABLE)[i].sum()


@partial(jax.jit, static_argnames="lr")
def step(w, lr):
    return w - lr * jnp.tanh(w)


w = jnp.ones(8)
for lr in [0.1, 0.05, 0.02, 0.01, 0.005, 0.002]:
    w = step(w, lr)
print(float(lookup(3)), float(w.sum()))
