"""Learning-rate schedules and per-config runs."""

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("lr",))
def sgd(params, grads, lr):
    return params - lr * grads


def cosine(step, total, base):
    return base * 0.5 * (1 + jnp.cos(jnp.pi * step / total))


def train(params, grads_fn, total):
    for step in range(total):
        lr = float(cosine(step, total, 0.1))
        params = sgd(params, grads_fn(params), lr=lr)  # expect: JS302
    return params


def run_configs(x, configs):
    results = []
    for cfg in configs:

        @jax.jit  # expect: JS303
        def run(v):
            return v * cfg["scale"] + cfg["shift"]

        results.append(run(x))
    return results
