"""A program whose data-loader thread blocks forever on a full queue once the main loop stops."""
import queue
import threading

import jax
import jax.numpy as jnp


@jax.jit
def step(w, batch):
    return w + batch.sum()


def loader(out):
    while True:
        out.put(jnp.ones((4,)))  # blocks when the queue is full: the main loop is gone


batches = queue.Queue(maxsize=2)
threading.Thread(target=loader, args=(batches,)).start()  # not a daemon: Python would wait for it at exit
w = jnp.zeros(())
for _ in range(100):
    w = step(w, batches.get())
