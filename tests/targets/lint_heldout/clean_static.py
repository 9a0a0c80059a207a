"""Static arguments that are hashable and take few values."""

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp

HIDDEN_SIZES = (256, 256, 128)


@dataclass(frozen=True)
class SamplerConfig:
    temperature: float
    top_k: int


@partial(jax.jit, static_argnames=("sizes",))
def init_mlp(key, sizes):
    keys = jax.random.split(key, len(sizes))
    return [jax.random.normal(k, (s,)) for k, s in zip(keys, sizes)]


@partial(jax.jit, static_argnames=("cfg",))
def sample(logits, key, cfg):
    return jax.random.categorical(key, logits / cfg.temperature)


@partial(jax.jit, static_argnames=("mode",))
def forward(x, mode):
    return x * 2 if mode == "train" else x


SAMPLER = SamplerConfig(temperature=0.8, top_k=40)


def build(key, logits):
    params = init_mlp(key, sizes=HIDDEN_SIZES)
    for mode in ("train", "eval"):
        logits = forward(logits, mode)
    return params, sample(logits, key, cfg=SAMPLER), jnp.zeros(1)
