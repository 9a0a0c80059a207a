"""Three workloads of very different sizes, used by ``benchmarks/bench_accuracy.py``.

    jitscope bench examples/bench_workloads.py:'*'
    jitscope bench examples/bench_workloads.py:small --shapes "f32[8]" --shapes "f32[100000]" --eager

``small`` is dispatch-bound (the device work is nanoseconds, the call is microseconds),
``medium`` does about a millisecond of work, ``large`` tens of milliseconds on a laptop CPU.
"""

import jax.numpy as jnp

JITSCOPE_EXAMPLES = {
    "small": "f32[8]",
    "medium": "f32[256,256], f32[256,256]",
    "large": "f32[1024,1024], f32[1024,1024]",
}


def small(x):
    return jnp.sin(x) * 2.0 + 1.0


def medium(a, b):
    return jnp.tanh(a @ b) + a


def large(a, b):
    return jnp.tanh(a @ b) @ b
