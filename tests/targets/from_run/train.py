"""A plain training loop for --from-run: a ragged last batch, a static flag, a donated state."""
import sys
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("training",), donate_argnums=(0,))
def step(w, x, training=True):
    scale = 0.1 if training else 0.0
    return w - scale * jax.grad(lambda w: jnp.sum((x @ w) ** 2))(w)


def main(n_batches):
    w = jnp.ones((4, 3))
    for i in range(n_batches):
        rows = 8 if i < n_batches - 1 else 5  # a ragged last batch
        w = step(w, jnp.ones((rows, 4)) * i)
        print(f"step {i + 1} done", flush=True)
    print("finished", flush=True)


if "--crash" in sys.argv:
    raise RuntimeError("the data is missing")
main(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 3)
