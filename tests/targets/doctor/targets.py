"""Functions for ``jitscope doctor module:fn``: a step that does not donate its parameters, a step that does,
and a scaled step whose ``scale`` is static although only arithmetic uses it (its examples call it three
times, one value each); one that raises."""

from functools import partial

import jax
import jax.numpy as jnp


def loss(params, x):
    h = jnp.tanh(x @ params["w1"])
    return jnp.mean((h @ params["w2"]) ** 2)


@jax.jit
def step(params, x):
    grads = jax.grad(loss)(params, x)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


@partial(jax.jit, donate_argnums=0)
def donated_step(params, x):
    grads = jax.grad(loss)(params, x)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


@partial(jax.jit, static_argnames="scale")
def scaled(x, scale):
    return jnp.sin(x) * scale


@jax.jit
def broken(x):
    raise ValueError("the batch is empty")


PARAMS = "{'w1': f32[512,1024], 'w2': f32[1024,512]}, f32[64,512]"
JITSCOPE_EXAMPLES = {
    "step": PARAMS,
    "donated_step": PARAMS,
    "broken": "f32[3]",
    "scaled": [{"shapes": "f32[256]", "static": {"scale": s}} for s in (0.5, 1.5, 2.5)],
}
