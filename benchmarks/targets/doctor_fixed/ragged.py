"""tests/targets/doctor/ragged.py fixed by hand as doctor says: batches padded to power-of-two lengths, the
padding masked."""

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def loss(w, batch, mask):
    per_row = jnp.mean((batch @ w) ** 2, axis=1)
    return jnp.sum(per_row * mask) / jnp.sum(mask)


w = jnp.ones((8, 4))
for n in range(3, 13):
    size = 1 << (n - 1).bit_length()
    batch = np.zeros((size, 8), np.float32)
    batch[:n] = 1.0
    mask = (np.arange(size) < n).astype(np.float32)
    print(float(loss(w, batch, mask)))
