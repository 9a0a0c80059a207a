"""tests/targets/doctor/static_value.py fixed by hand as doctor says: lr traced, not static."""

import jax
import jax.numpy as jnp


@jax.jit
def step(w, x, lr):
    grad = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - lr * grad


w = jnp.ones((32, 32))
x = jnp.ones((16, 32))
for i in range(8):
    w = step(w, x, lr=jnp.asarray(0.1 / (i + 1)))
print(float(w.sum()))
