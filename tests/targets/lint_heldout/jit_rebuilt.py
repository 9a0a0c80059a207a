"""Jitted functions rebuilt inside loops: partials and lambdas are new objects every time."""

from functools import partial

import jax
import jax.numpy as jnp


def objective(params, x, l2):
    return jnp.sum((x @ params) ** 2) + l2 * jnp.sum(params**2)


def regularisation_path(params, x, penalties):
    losses = []
    for l2 in penalties:
        value_and_grad = jax.jit(jax.value_and_grad(partial(objective, l2=l2)))  # expect: JS303
        loss, _ = value_and_grad(params, x)
        losses.append(loss)
    return losses


def evaluate_powers(x, powers):
    results = {}
    for p in powers:
        power_fn = jax.jit(lambda v: jnp.power(v, p))  # expect: JS303
        results[p] = power_fn(x)
    return results


def per_layer(layers, x):
    while layers:
        layer = layers.pop(0)
        x = jax.jit(partial(jnp.dot, layer))(x)  # expect: JS303
    return x
