"""jit applied inside loops: a new function object (and a new compilation) every iteration."""

import functools

import jax
import jax.numpy as jnp


def loss(params, x, weight_decay):
    return jnp.mean((x @ params) ** 2) + weight_decay * jnp.sum(params**2)


def sweep(params, x, decays):
    results = {}
    for wd in decays:
        loss_fn = jax.jit(functools.partial(loss, weight_decay=wd))  # expect: JS303
        results[wd] = loss_fn(params, x)
    return results


def sweep_lambda(params, x, decays):
    out = []
    for wd in decays:
        out.append(jax.jit(lambda p, v: loss(p, v, wd))(params, x))  # expect: JS303
    return out


def per_layer(layers, x):
    for layer in layers:
        apply = jax.jit(layer.apply)  # expect: JS303
        x = apply(x)
    return x


def sweep_comprehension(params, x, decays):
    return [jax.jit(functools.partial(loss, weight_decay=wd))(params, x) for wd in decays]  # expect: JS303


@jax.jit
def compiled_loss(params, x, weight_decay):
    return loss(params, x, weight_decay)


def sweep_ok(params, x, decays):
    return [compiled_loss(params, x, wd) for wd in decays]
