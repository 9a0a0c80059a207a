"""A held-out target for ``trace_overhead.py --targets matmul``: one 512x512 matmul, where jitscope's own
start-up is most of what it adds (the JAX work is small)."""

import jax
import jax.numpy as jnp


@jax.jit
def matmul(a, b):
    return a @ b


SPEC = jax.ShapeDtypeStruct((512, 512), jnp.float32)
JITSCOPE_EXAMPLES = {"matmul": {"args": (SPEC, SPEC)}}
