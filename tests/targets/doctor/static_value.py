"""A training loop whose step takes its learning rate as a static argument: one compile per new value."""

import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames="lr")
def step(w, x, lr):
    grad = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - lr * grad


w = jnp.ones((32, 32))
x = jnp.ones((16, 32))
for i in range(8):
    w = step(w, x, lr=0.1 / (i + 1))  # a decaying schedule, a new static value each step
print(float(w.sum()))
