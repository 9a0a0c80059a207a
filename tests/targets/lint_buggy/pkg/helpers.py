"""Helpers called from jitted code in another module: only the cross-module analysis sees them."""

import jax.numpy as jnp


def clip_positive(v):
    if v.min() < 0:  # JS201: v is traced when called from pkg.model.step
        v = jnp.abs(v)
    return v


def describe(v):
    print("shape", v.shape)  # JS101, reached through pkg.model.step
    return v
