"""A user-shaped module for target-loading tests."""

from functools import partial

import jax
import jax.numpy as jnp

from pkg.helpers import scale  # sibling import: needs the project root on sys.path


@jax.jit
def plain_jit(x):
    return scale(x) + 1


@partial(jax.jit, static_argnames=("n",), donate_argnums=(0,))
def with_statics(x, n=2):
    return x * n


def raw(x, y):
    return jnp.dot(x, y)


made = jax.jit(raw, static_argnums=(1,))


class Model:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return x * self.k


model = Model(3.0)
NOT_CALLABLE = 42

JITSCOPE_EXAMPLES = {
    "plain_jit": "f32[3]",
    "with_statics": [{"shapes": "f32[4]", "static": {"n": 1}}, {"shapes": "f32[8]", "static": {"n": 2}}],
    "model.apply": {"args": (jax.ShapeDtypeStruct((2, 2), jnp.float32),)},
}
