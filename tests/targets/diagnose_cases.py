"""Trace-time failures whose fixes jitscope should name precisely (tests/tracing/test_diagnose.py)."""

import jax.numpy as jnp


def branch_on_leaf(params, x, scale):
    if params[0]["ln"].sum() > 0:
        return x * scale
    return x


def zeros_of(x, n):
    return jnp.zeros(n) + x


def by_mode(x, mode):
    if mode == "double":
        return x * 2
    return x
