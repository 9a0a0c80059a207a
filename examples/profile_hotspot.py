"""A layer whose time is all in one line: a large matmul among cheap elementwise work.

    jitscope profile examples/profile_hotspot.py:layer
"""

import jax
import jax.numpy as jnp


def normalize(h):
    centred = h - jnp.mean(h, axis=-1, keepdims=True)
    return centred * jax.lax.rsqrt(jnp.mean(centred * centred, axis=-1, keepdims=True) + 1e-5)


@jax.jit
def layer(x, w, b):
    h = jnp.tanh(x) * 0.5
    y = h @ w
    y = y + b
    return normalize(y)


JITSCOPE_EXAMPLES = {"layer": "f32[256,512], f32[512,512], f32[512]"}
