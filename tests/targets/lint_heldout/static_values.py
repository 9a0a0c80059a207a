"""Static arguments given by name: module constants, dataclasses, data-derived values."""

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

HIDDEN_SIZES = [256, 256, 128]
DEFAULT_MASK = np.ones(16, dtype=bool)


@dataclass
class SamplerConfig:
    temperature: float
    top_k: int


@partial(jax.jit, static_argnames=("sizes",))
def init_mlp(key, sizes):
    keys = jax.random.split(key, len(sizes))
    return [jax.random.normal(k, (s,)) for k, s in zip(keys, sizes)]


@partial(jax.jit, static_argnames=("mask",))
def masked_mean(x, mask):
    return jnp.mean(x[..., mask])


@partial(jax.jit, static_argnames=("cfg",))
def sample(logits, key, cfg):
    top = jax.lax.top_k(logits / cfg.temperature, cfg.top_k)[0]
    return jax.random.categorical(key, top)


@partial(jax.jit, static_argnames=("k",))
def top_k_mean(scores, k):
    return jnp.mean(jax.lax.top_k(scores, k)[0])


def build(key):
    return init_mlp(key, sizes=HIDDEN_SIZES)  # expect: JS301


def summarize(x):
    return masked_mean(x, mask=DEFAULT_MASK)  # expect: JS301


def draw(logits, key):
    cfg = SamplerConfig(temperature=0.8, top_k=40)
    return sample(logits, key, cfg=cfg)  # expect: JS301


def adaptive_top_k(scores, threshold):
    k = int(jnp.sum(scores > threshold))
    return top_k_mean(scores, k=k)  # expect: JS302
