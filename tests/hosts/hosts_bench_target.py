"""Functions ``jitscope bench --processes 2`` times in tests/hosts: ``normalize`` on rows sharded across the
processes (its mean is an all-reduce between them, gloo on CPU), and ``local_sum`` on one process's array."""

import time

import jax
import jax.numpy as jnp


def normalize(x):
    return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)


def local_sum(x):
    return jnp.tanh(x).sum()


def uneven(x):
    """Process 1 pauses 20 ms in a host callback on every call: the straggler (no collectives: each process
    calls it on its own device)."""
    def pause(value):
        if jax.process_index() == 1:
            time.sleep(0.02)
        return value

    return jax.pure_callback(pause, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


def fails_on_p1(x):
    """Raises while tracing on process 1 only; process 0 goes on into the all-reduce and waits there."""
    if jax.process_index() == 1:
        raise ValueError("bad batch on process 1")
    return x.sum()


def branch_on_p1(x):
    """Process 1 takes another Python branch under jit: a different program with the same all-reduce."""
    scale = 0.5 if jax.process_index() == 1 else 2.0
    return (x * scale).sum()
