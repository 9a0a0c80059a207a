"""Training entry points built with the project's compile helpers."""

import jax.numpy as jnp

from proj.compilation import compiled, jit_model, jit_with_config


def _sgd_step(params, opt, grads):
    return jax_tree_sub(params, opt["lr"], grads)


def jax_tree_sub(params, lr, grads):
    return {k: params[k] - lr * grads[k] for k in params}


sgd_step = jit_with_config(_sgd_step)


@compiled
def rollout(state, action, n_steps):
    for _ in range(n_steps):
        state = state + action
    return state


def _apply(params, x, mode):
    return x @ params["w"] if mode == "train" else x @ params["w"] * 0.5


apply = jit_model(_apply)


def fit(params, grads_seq, lr):
    opt = {"lr": lr, "momentum": 0.9}
    for grads in grads_seq:
        params = sgd_step(params, opt, grads)  # expect: JS301
    return params


def plan(state, action, horizon):
    outs = []
    for n in range(1, horizon):
        outs.append(rollout(state, action, n_steps=n))  # expect: JS302
    return outs


def predict(params, x, modes):
    return apply(params, x, mode=list(modes))  # expect: JS301


def fit_ok(params, grads_seq):
    for grads in grads_seq:
        params = sgd_step(params, ("sgd", 0.1), grads)
    return jnp.asarray(0.0), params
