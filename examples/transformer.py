"""A small pre-norm transformer encoder (multi-head attention + MLP), layers applied with a Python loop.

The loop over layers unrolls at trace time (a static count), so the jaxpr grows with depth:
compare ``--shapes`` with 2 and 6 layers to see trace and compile cost grow.

    jitscope trace examples/transformer.py:encode --stages jaxpr,cost,memory
    jitscope bench examples/transformer.py:encode
"""

from functools import partial

import jax
import jax.numpy as jnp


def layer_norm(x, scale, bias, eps=1e-6):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * scale + bias


def attention(p, x, num_heads):
    batch, seq, dim = x.shape
    head = dim // num_heads
    qkv = x @ p["qkv"]  # [batch, seq, 3 * dim]
    q, k, v = jnp.split(qkv.reshape(batch, seq, 3, num_heads, head), 3, axis=2)
    q, k, v = (t.squeeze(2).transpose(0, 2, 1, 3) for t in (q, k, v))
    weights = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(head), axis=-1)
    out = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, seq, dim)
    return out @ p["out"]


def block(p, x, num_heads):
    x = x + attention(p["attn"], layer_norm(x, *p["ln1"]), num_heads)
    h = jax.nn.gelu(layer_norm(x, *p["ln2"]) @ p["mlp_in"])
    return x + h @ p["mlp_out"]


@partial(jax.jit, static_argnames=("num_heads",))
def encode(layers, x, num_heads=4):
    for p in layers:  # unrolled: len(layers) is static
        x = block(p, x, num_heads)
    return x


def _layer(dim: int = 128, hidden: int = 512) -> str:
    return (
        f"{{'attn': {{'qkv': f32[{dim},{3 * dim}], 'out': f32[{dim},{dim}]}}, "
        f"'ln1': (f32[{dim}], f32[{dim}]), 'ln2': (f32[{dim}], f32[{dim}]), "
        f"'mlp_in': f32[{dim},{hidden}], 'mlp_out': f32[{hidden},{dim}]}}"
    )


JITSCOPE_EXAMPLES = {
    "encode": f"[{', '.join([_layer()] * 4)}], f32[8,64,128]",
}
