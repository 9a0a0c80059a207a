"""Functions for the bench tests: ordinary, multi-output, zero-output, non-array output, donated, failing."""

import jax
import jax.numpy as jnp

JITSCOPE_EXAMPLES = {
    "scale": "f32[16]",
    "power": [{"shapes": "f32[8]", "static": {"n": 1}}, {"shapes": "f32[8]", "static": {"n": 2}}],
}


def scale(x):
    return jnp.sin(x) * 2.0 + 1.0


def power(x, n):
    for _ in range(n):
        x = x * x
    return x


def several(x, y):
    return {"sum": x + y, "parts": (x * 2, y.mean()), "nothing": None}


def nothing(x):
    del x  # returns None: no outputs at all


def empty_tuple(x):
    return ()


def matmul(a, b):
    return a @ b


@jax.jit
def _plain_add(x):
    return x + 1


add_donated = jax.jit(lambda x: x + 1.0, donate_argnums=0)


def fails_at_run(x):
    raise RuntimeError("broken on purpose")


def branches_on_data(x):
    if x.sum() > 0:
        return x
    return -x


def chatty(x):
    print("python print while tracing")
    jax.debug.print("debug print at run time: {}", x.sum())
    return x * 2.0


def device_oom(x):
    """Raises the error XLA raises when another process holds the device's memory (a real instance)."""
    from jitscope.jaxcompat.runtime_errors import runtime_error_types

    raise runtime_error_types()[0]("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.")


JITSCOPE_EXAMPLES["fails_at_run"] = "f32[3]"


add_donated_by_name = jax.jit(lambda x, y: x + y, donate_argnames="y")


def branches_on_setting(x, limit):
    if x.sum() > limit:  # a Python `if` on traced data: fails on the first call
        return x
    return -x
