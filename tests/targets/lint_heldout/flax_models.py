"""Flax models compiled with the lifted nn.jit and nnx.jit."""

import jax.numpy as jnp
from flax import linen as nn
from flax import nnx


class Block(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        print("Block input", x.shape, x)  # expect: JS101
        return nn.Dense(self.features)(x)


JitBlock = nn.jit(Block)


class Encoder(nnx.Module):
    def __init__(self, rngs):
        self.proj = nnx.Linear(8, 8, rngs=rngs)

    def __call__(self, x):
        return self.proj(x)


@nnx.jit
def encode(model, x):
    h = model(x)
    if jnp.linalg.norm(h) > 10.0:  # expect: JS201
        h = h / jnp.linalg.norm(h)
    return h


@nnx.jit(static_argnames=("depth",))
def encode_deep(model, x, depth):
    for _ in range(depth):
        x = model(x)
    return x


def encode_progressive(model, x):
    outs = []
    for depth in range(1, 12):
        outs.append(encode_deep(model, x, depth=depth))  # expect: JS302
    return outs
