import jax.numpy as jnp

W = jnp.ones((64, 64))


def make():
    bias = jnp.arange(64.0)

    def affine(x):
        return x @ W + bias

    return affine


affine = make()
JITSCOPE_EXAMPLES = {"affine": "f32[8,64]"}
