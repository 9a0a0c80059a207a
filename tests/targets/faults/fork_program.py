"""A program that forks a child that never uses JAX and exits 5 (issue 30): only the parent's report counts."""
import os
import sys
import time

import jax
import jax.numpy as jnp

pid = os.fork()
if pid == 0:
    sys.exit(5)  # the child unwinds through jitscope's frames, as a forked child of any program would
os.waitpid(pid, 0)
time.sleep(0.05)
for n in (2, 3, 4):
    jax.jit(lambda x: x + 1)(jnp.ones(n))
