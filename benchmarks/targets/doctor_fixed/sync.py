"""tests/targets/doctor/sync.py fixed by hand as doctor says: the losses kept on the device, fetched once."""

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
    x = jnp.asarray(rng.random((384, 384), dtype=np.float32) / 384)
    w, loss = step(w, x)
    losses.append(loss)
losses = jax.device_get(losses)
print(f"final loss {float(losses[-1]):.4f}")
