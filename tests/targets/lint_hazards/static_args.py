"""Static arguments: unhashable values and values that change on every call."""

from functools import partial

import jax
import jax.numpy as jnp

EVAL_CONFIG = {"temperature": 0.7, "top_k": 40}


@partial(jax.jit, static_argnames=("cfg",))
def eval_step(params, x, cfg):
    return (x @ params["w"]) / cfg["temperature"]


@partial(jax.jit, static_argnames=("shape",))
def reshape_to(x, shape):
    return x.reshape(shape)


@partial(jax.jit, static_argnums=(1,))
def take_first(x, n):
    return x[:n]


@partial(jax.jit, static_argnames=("scale",))
def scaled(x, scale):
    return x * scale


@partial(jax.jit, static_argnames=("activation",))
def dense(params, x, activation):
    return activation(x @ params["w"] + params["b"])


def evaluate(params, batches):
    return [eval_step(params, b, cfg=EVAL_CONFIG) for b in batches]  # expect: JS301


def regroup(x, groups):
    dims = []
    for g in groups:
        dims.append(len(g))
    return reshape_to(x, dims)  # expect: JS301


def regroup_literal(x):
    return reshape_to(x, shape=[4, -1])  # expect: JS301


def configured(params, x, temperature):
    options = dict(temperature=temperature, top_k=10)
    return eval_step(params, x, cfg=options)  # expect: JS301


def truncate_all(x, lengths):
    out = []
    for n in range(1, 8):
        out.append(take_first(x, n))  # expect: JS302
    return out


def truncate_to_mask(x, mask):
    n = int(mask.sum())
    return take_first(x, n)  # expect: JS302


def anneal(x, schedule):
    for step in range(100):
        x = scaled(x, scale=0.99**step)  # expect: JS302
    return x


def forward(params, x):
    return dense(params, x, activation=lambda v: jnp.maximum(v, 0.0))  # expect: JS302


def forward_ok(params, x):
    return dense(params, x, activation=jax.nn.relu)
