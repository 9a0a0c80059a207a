"""A jitted function called from a data-loader-style worker thread while the main thread trains."""
import queue
import threading

import jax
import jax.numpy as jnp


@jax.jit
def preprocess(batch):
    return (batch - batch.mean()) / (batch.std() + 1e-6)


@jax.jit
def train_step(w, batch):
    return w - 0.1 * jax.grad(lambda w: jnp.sum((batch @ w) ** 2))(w)


def loader(out: queue.Queue, n: int) -> None:
    for i in range(n):
        size = 16 if i < n - 1 else 8  # the last batch is short: preprocess recompiles on this thread
        out.put(preprocess(jnp.ones((size, 4)) * i))
    out.put(None)


batches: queue.Queue = queue.Queue(maxsize=2)
worker = threading.Thread(target=loader, args=(batches, 4))
worker.start()
w = jnp.ones((4, 2))
while (batch := batches.get()) is not None:
    w = train_step(w, batch)
worker.join()
print(w.shape)
