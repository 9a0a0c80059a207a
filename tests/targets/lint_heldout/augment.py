"""Data augmentation written with host random numbers."""

import random

import jax
import jax.numpy as jnp
import numpy as np


def jitter(x, scale):
    noise = np.random.normal(size=x.shape)  # expect: JS106
    return x + scale * noise


@jax.jit
def augment(x):
    x = jitter(x, 0.1)
    if random.random() < 0.5:  # expect: JS106
        x = jnp.flip(x, axis=0)
    return x
