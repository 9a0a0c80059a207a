"""Typed PRNG keys and JAX's other extended and narrow dtypes as arguments (issue 29, item 1).

``step`` takes ``jax.random.key(0)``, JAX's recommended key; ``mixed`` a batch of rbg keys, a
``float0`` tangent, bf16, float8 and int4 arrays. Run as a script, it calls both under ``jax.jit``
(the second ``step`` call with an unsafe_rbg key: a recompile), for ``run --capture``.
"""

import jax
import jax.numpy as jnp
import numpy as np


def step(key, x):
    return jax.random.normal(key, x.shape) + x


def mixed(keys, tangent, h, f8, q):
    noise = jax.vmap(lambda k: jax.random.uniform(k, (2,)))(keys).sum()
    return noise + h.astype(jnp.float32).sum() + f8.astype(jnp.float32).sum() + q.astype(jnp.float32).sum()


def mixed_args():
    return (jax.random.split(jax.random.key(1, impl="rbg"), 3), np.zeros((2,), jax.dtypes.float0),
            jnp.ones((4,), jnp.bfloat16), jnp.ones((4,), jnp.float8_e4m3fn), jnp.ones((8,), jnp.int4))


JITSCOPE_EXAMPLES = {
    "step": {"args": (jax.random.key(0), jnp.zeros((4, 3)))},
    "mixed": {"args": mixed_args()},
}

if __name__ == "__main__":
    jitted = jax.jit(step)
    jitted(jax.random.key(0), jnp.zeros((4, 3)))
    jitted(jax.random.key(0, impl="unsafe_rbg"), jnp.zeros((4, 3)))
    jax.jit(mixed)(*mixed_args())
