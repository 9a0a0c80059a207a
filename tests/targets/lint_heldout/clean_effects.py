"""Logging and randomness done the JAX way, and host-side code outside jit."""

import functools
import logging
import time

import jax
import jax.numpy as jnp
import numpy as np

logger = logging.getLogger(__name__)
log = functools.partial(print, "[host]")


@jax.jit
def train_step(params, x, key):
    loss = jnp.mean((x @ params) ** 2)
    jax.debug.print("loss {}", loss)
    noise = jax.random.normal(key, params.shape)
    return params - 0.01 * noise, loss


def train(params, xs, seed):
    key = jax.random.PRNGKey(seed)
    start = time.time()
    for i, x in enumerate(xs):
        key, sub = jax.random.split(key)
        params, loss = train_step(params, x, sub)
        log("step", i, float(loss))
        logger.info("step %d loss %.3f", i, float(loss))
    shuffled = np.random.permutation(len(xs))
    return params, shuffled, time.time() - start
