"""Seed 1, "Compile and Cache": ``jax.jit(jnp.sin)`` compiles on the first call, not when wrapped.

    jitscope trace examples/jit_sin.py:fsin
    jitscope bench examples/jit_sin.py:fsin --shapes "f32[1000]"
"""

import jax
import jax.numpy as jnp

fsin = jax.jit(jnp.sin)

JITSCOPE_EXAMPLES = {
    # x = jnp.linspace(0, 1.0, 5)
    "fsin": "f32[5]",
}

if __name__ == "__main__":
    x = jnp.linspace(0, 1.0, 5)
    print(jnp.array_equal(jnp.sin(x), fsin(x)))
