"""Functions for the profile tests: one line dominates; helpers nested two deep; several lines fused."""

import jax
import jax.numpy as jnp


def scale(h):
    return jnp.exp(h) * 0.5


def helper(h):
    g = h + 1.0
    return scale(g)


def hotspot(x, w):
    a = x * 2.0 + 1.0
    b = a @ w
    c = jnp.maximum(b, 0.0)
    return c - 3.0


def nested(x):
    y = x * 2.0
    z = helper(y)
    return z.sum()


def scanned(xs, h):
    h_final, _ = jax.lax.scan(lambda c, x: (helper(c * x), None), h, xs)
    return h_final


JITSCOPE_EXAMPLES = {
    "hotspot": "f32[256,512], f32[512,512]",
    "nested": "f32[64,64]",
    "scanned": "f32[4,32], f32[32]",
}
