"""Correct JAX code that a naive linter would flag."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

LAYER_SIZES = (8, 4)


def init(key, sizes=LAYER_SIZES):
    keys = jax.random.split(key, len(sizes))
    return [jax.random.normal(k, (n, n)) for k, n in zip(keys, sizes)]


@jax.jit
def forward(params, x):
    # Python loops over a static count unroll: fine.
    for w in params:
        x = jnp.tanh(x @ w[: x.shape[-1], : x.shape[-1]])
    if x.ndim == 2:  # static: shapes are known while tracing
        x = x.mean(axis=0)
    return x


@partial(jax.jit, static_argnames=("n_steps", "mode"))
def integrate(x, dt, n_steps: int, mode: str = "euler"):
    for _ in range(n_steps):  # static argument: unrolled
        x = x + dt * jnp.sin(x)
    if mode == "euler":  # static argument
        return x
    return -x


def _body(carry, x):
    total, count = carry
    return (total + x, count + 1), total


@jax.jit
def cumulative(xs):
    (total, count), partial_sums = lax.scan(_body, (0.0, 0), xs)
    n = len(xs)  # static
    mean = total / jnp.maximum(count, 1)
    return jnp.where(mean > 0, partial_sums / n, partial_sums)


def normalize(x, axis=None):
    if axis is None:
        return x / jnp.linalg.norm(x)
    return x / jnp.linalg.norm(x, axis=axis, keepdims=True)


@jax.jit
def loss(params, x, y):
    pred = forward(params, x)
    out = {"pred": pred}
    out["err"] = jnp.mean((normalize(pred) - y) ** 2)
    jax.debug.print("loss = {}", out["err"])
    return out["err"]


grad_loss = jax.jit(jax.grad(loss))
