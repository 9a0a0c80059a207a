import sys

import jax
import jax.numpy as jnp

jax.jit(lambda x: x + 1)(jnp.ones(3))
sys.path.clear()
