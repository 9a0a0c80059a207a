"""The project's compile helpers: every step function goes through one of these."""

from functools import partial

import jax


def jit_with_config(fn):
    """Compile a step whose second argument is its (hashable) configuration."""
    return jax.jit(fn, static_argnums=(1,))


def compiled(fn):
    """Decorator: compile ``fn`` with its rollout length fixed at trace time."""
    return jax.jit(fn, static_argnames=("n_steps",), donate_argnums=(0,))


def jit_model(apply_fn, mode_names=("mode",)):
    return partial(jax.jit, static_argnames=mode_names)(apply_fn)
