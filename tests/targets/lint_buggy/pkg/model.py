import time

import jax
import jax.numpy as jnp

from pkg import helpers
from pkg.helpers import describe

history = []


@jax.jit
def step(x):
    x = helpers.clip_positive(x)
    x = describe(x)
    history.append(x)  # JS107: a tracer leaks into a module-level list
    return x * time.time()  # JS106


def run(xs):
    out = []
    for i in range(1, len(xs)):
        out.append(step(xs[:i]))  # JS304: a new shape every iteration
    return out


def fine(x):
    return jnp.sum(x)  # jitscope: ignore[JS203]
