"""An ordinary training loop: one compile, cached steps."""

import jax
import jax.numpy as jnp


@jax.jit
def step(w, x):
    grad = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.1 * grad


w, x = jnp.ones((32, 32)), jnp.ones((16, 32))
for _ in range(20):
    w = step(w, x)
print(float(w.sum()))
