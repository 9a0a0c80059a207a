"""A training loop whose step returns new parameters of the same shapes but does not donate the old ones:
both copies are live at the step's peak (planted problem: the jit at line 15)."""

import jax
import jax.numpy as jnp


def loss(params, x):
    h = jnp.tanh(x @ params["w1"])
    return jnp.mean((h @ params["w2"]) ** 2)


# fmt: off
@jax.jit
def step(params, x):
    grads = jax.grad(loss)(params, x)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


params = {"w1": jnp.full((512, 1024), 0.01, jnp.float32), "w2": jnp.full((1024, 512), 0.01, jnp.float32)}
x = jnp.ones((64, 512))
for _ in range(5):
    params = step(params, x)
print(float(params["w1"].sum()))
