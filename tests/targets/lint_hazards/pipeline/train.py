"""Training loop that builds its steps with the project's jit wrapper (another module)."""

import jax.numpy as jnp

from pipeline.compile import jit_static


def _update(params, batch, cfg):
    return params - cfg["lr"] * jnp.mean(batch, axis=0)


update = jit_static(_update, static_argnames=("cfg",))


def train(params, batches, lr):
    cfg = {"lr": lr}
    for batch in batches:
        params = update(params, batch, cfg=cfg)  # expect: JS301
    return params
