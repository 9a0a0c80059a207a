"""A static argument that picks a code path (a Python `if` on it): it cannot simply be traced."""

import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames="depth")
def forward(x, depth):
    for _ in range(depth):  # unrolled depth times: a different program for each depth, by design
        x = jnp.tanh(x @ x.T @ x)
    return x


x = jnp.ones((16, 16)) * 0.01
for depth in range(1, 7):
    x = forward(x, depth)
print(float(x.sum()))
