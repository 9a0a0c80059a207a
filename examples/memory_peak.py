"""For the README's `jitscope memory`: a training step whose peak is the activations saved for backward."""

import jax
import jax.numpy as jnp


def loss(w1, w2, x):
    h = jax.nn.gelu(x @ w1)  # f32[8192,1024]: 32 MiB, saved for the backward pass
    return jnp.mean((h @ w2) ** 2)


def train_step(w1, w2, x):
    g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x)
    return w1 - 0.01 * g1, w2 - 0.01 * g2


JITSCOPE_EXAMPLES = {"train_step": "f32[512,1024], f32[1024,512], f32[8192,512]"}
