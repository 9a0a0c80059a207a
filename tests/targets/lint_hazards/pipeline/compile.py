"""A project's own jit wrappers: functions that return jax.jit(...)."""

import jax


def jit_static(fn, static_argnames=()):
    """jit with donation of the first argument and the given static names."""
    return jax.jit(fn, static_argnames=static_argnames, donate_argnums=(0,))


def compile_stepper(fn):
    return jax.jit(fn, static_argnums=(2,))


def _rollout(state, x, horizon):
    for _ in range(horizon):
        state = state + x
    return state


rollout = compile_stepper(_rollout)


def plan(state, x):
    for h in range(1, 20):
        state = rollout(state, x, h)  # expect: JS302
    return state
