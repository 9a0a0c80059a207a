"""Side effects that run only while JAX traces: hidden behind setattr, partials and map."""

import functools
import logging
from functools import partial as bind

import jax
import jax.numpy as jnp

logger = logging.getLogger(__name__)
log = functools.partial(print, "[train]")
warn = bind(logger.warning, "step %s")


class Tracker:
    def __init__(self):
        self.last_loss = None

    @functools.partial(jax.jit, static_argnums=0)
    def step(self, params, x):
        loss = jnp.mean((x @ params) ** 2)
        setattr(self, "last_loss", loss)  # expect: JS107
        return loss


@jax.jit
def train_step(params, x):
    loss = jnp.mean((x @ params) ** 2)
    log("loss", loss)  # expect: JS101
    return loss


@jax.jit
def debug_grads(params, x):
    grads = jax.grad(lambda p: jnp.mean((x @ p) ** 2))(params)
    jax.tree_util.tree_map(print, grads)  # expect: JS101
    return grads


@jax.jit
def report(values):
    list(map(print, values))  # expect: JS101
    warn(values[0])  # expect: JS101
    return sum(values)
