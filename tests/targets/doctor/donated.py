"""no_donation.py with its fix: the step donates the parameters it replaces (donate_argnames), so doctor
has no memory finding: the run sees the donation in the user's jit, and analyses the step with it."""

from functools import partial

import jax
import jax.numpy as jnp


def loss(params, x):
    h = jnp.tanh(x @ params["w1"])
    return jnp.mean((h @ params["w2"]) ** 2)


# fmt: off
@partial(jax.jit, donate_argnames="params")
def step(params, x):
    grads = jax.grad(loss)(params, x)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


params = {"w1": jnp.full((512, 1024), 0.01, jnp.float32), "w2": jnp.full((1024, 512), 0.01, jnp.float32)}
x = jnp.ones((64, 512))
for _ in range(5):
    params = step(params, x)
print(float(params["w1"].sum()))
