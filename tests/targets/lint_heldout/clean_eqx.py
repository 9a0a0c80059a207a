"""Equinox and flax code that compiles once: arrays traced, fixed Python values static."""

import equinox as eqx
import jax
import jax.numpy as jnp
from flax import nnx

ACTIVATION = jax.nn.tanh


@eqx.filter_jit
def simulate(model, y0, n_substeps, dt):
    y = y0
    for _ in range(n_substeps):
        y = y + dt * model(y)
    return y


@nnx.jit
def encode(model, x):
    h = model(x)
    return jnp.where(jnp.linalg.norm(h) > 10.0, h / jnp.linalg.norm(h), h)


def run(model, y0s):
    return [simulate(model, y0, 100, 0.01) for y0 in y0s]


def sweep(model, y0, dts):
    return [simulate(model, y0, 50, jnp.asarray(dt)) for dt in dts]


def activate(model, x):
    return ACTIVATION(model(x))
