"""Closes sys.stderr (argv[1] == "object") or file descriptor 2 ("fd"), then exits 0 (issue 30)."""
import os
import sys

import jax
import jax.numpy as jnp

jax.jit(lambda x: x + 1)(jnp.ones(3))
if sys.argv[1] == "object":
    sys.stderr.close()
else:
    os.close(2)
