"""The workloads of ``benchmarks/gpu_check.py``: a matmul, a convolution and a small transformer's training step,
each at a GPU size and at a small size for the CPU smoke run (``--quick``).

Each workload is ``(function, make_arguments, bytes_needed)``: ``make_arguments(key)`` builds real arrays on
the default device; ``bytes_needed`` is a rough upper bound of the device memory one call needs (arguments,
outputs, temporaries), so a GPU too small for a case is told before the case runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from transformer import block  # noqa: E402 - the bundled example's layer, trained here


@dataclass(frozen=True)
class Workload:
    name: str
    fn: Callable[..., Any]
    make_arguments: Callable[[jax.Array], tuple[Any, ...]]
    bytes_needed: int
    what: str


@jax.jit
def matmul(a, b):  # type: ignore[no-untyped-def]
    return a @ b


@jax.jit
def conv(x, w):  # type: ignore[no-untyped-def]
    """A 3x3 same-padded convolution, NHWC, as a ResNet stage has it."""
    y = jax.lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y)


def _loss(layers, x, y):  # type: ignore[no-untyped-def]
    for p in layers:
        x = block(p, x, 8)
    return jnp.mean((x - y) ** 2)


@jax.jit
def train_step(layers, x, y):  # type: ignore[no-untyped-def]
    """One SGD step of a pre-norm transformer encoder (attention + MLP per layer), loss and gradients."""
    loss, grads = jax.value_and_grad(_loss)(layers, x, y)
    layers = jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, layers, grads)
    return layers, loss


def _layers(key: jax.Array, n: int, dim: int, hidden: int, dtype: Any) -> list[dict[str, Any]]:
    def normal(key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
        return (jax.random.normal(key, shape) / shape[0] ** 0.5).astype(dtype)

    out = []
    for k in jax.random.split(key, n):
        k1, k2, k3, k4 = jax.random.split(k, 4)
        ones, zeros = jnp.ones(dim, dtype), jnp.zeros(dim, dtype)
        out.append({"attn": {"qkv": normal(k1, (dim, 3 * dim)), "out": normal(k2, (dim, dim))},
                    "ln1": (ones, zeros), "ln2": (ones, zeros),
                    "mlp_in": normal(k3, (dim, hidden)), "mlp_out": normal(k4, (hidden, dim))})
    return out


def workloads(quick: bool) -> tuple[Workload, ...]:
    """The three workloads, GPU-sized (about 1-30 ms a call on an H100) or CPU-sized for ``--quick``."""
    n = 256 if quick else 8192
    batch, side, channels = (2, 16, 16) if quick else (64, 56, 256)
    layers, dim, hidden, seqs, seq = (1, 64, 256, 2, 32) if quick else (4, 1024, 4096, 16, 512)
    dtype = jnp.float32 if quick else jnp.bfloat16

    def mm_args(key: jax.Array) -> tuple[Any, ...]:
        a, b = jax.random.split(key)
        return jax.random.normal(a, (n, n), dtype), jax.random.normal(b, (n, n), dtype)

    def conv_args(key: jax.Array) -> tuple[Any, ...]:
        a, b = jax.random.split(key)
        return (jax.random.normal(a, (batch, side, side, channels), dtype),
                (jax.random.normal(b, (3, 3, channels, channels)) / (9 * channels) ** 0.5).astype(dtype))

    def step_args(key: jax.Array) -> tuple[Any, ...]:
        a, b, c = jax.random.split(key, 3)
        return (_layers(a, layers, dim, hidden, jnp.float32),
                jax.random.normal(b, (seqs, seq, dim)), jax.random.normal(c, (seqs, seq, dim)))

    item = jnp.dtype(dtype).itemsize
    params = layers * (4 * dim * dim + 2 * dim * hidden) * 4
    activations = layers * seqs * seq * (12 * dim + 2 * hidden) * 4 + layers * seqs * 8 * seq * seq * 4 * 2
    return (
        Workload("matmul", matmul, mm_args, 3 * n * n * item, f"{n}x{n} @ {n}x{n} {jnp.dtype(dtype).name}"),
        Workload("convolution", conv, conv_args, 3 * batch * side * side * channels * item,
                 f"3x3 conv {batch}x{side}x{side}x{channels} {jnp.dtype(dtype).name}"),
        Workload("transformer step", train_step, step_args, 4 * params + 2 * activations,
                 f"{layers}-layer transformer training step, d={dim}, {seqs}x{seq} tokens"),
    )
