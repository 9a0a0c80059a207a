"""A training loop that reads its loss back to the host every step: each float(loss) waits for the device."""

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def step(w, x):
    for _ in range(4):
        w = jnp.tanh(w @ x)
    return w, jnp.mean(w)


w = jnp.ones((384, 384)) / 384
rng = np.random.default_rng(0)
losses = []
for i in range(100):
    x = jnp.asarray(rng.random((384, 384), dtype=np.float32) / 384)  # the host's own work for the next step
    w, loss = step(w, x)
    losses.append(float(loss))
print(f"final loss {losses[-1]:.4f}")
