"""Seed 1, "Tracing with jax.make_jaxpr": a function that prints what it is given.

Called normally it prints arrays; traced, it prints ``DynamicJaxprTracer``s, which carry a
shape and dtype but no data. ``jitscope trace`` shows the same peek as a table ("what the
function saw"), captures the prints, and flags them as trace-time side effects.

    jitscope trace examples/tracing_peek.py:f
"""

import jax
import jax.numpy as jnp


def f(x, y) -> jax.Array:
    print("type(x):", type(x))
    print("x:", x)
    print("type(y):", type(y))
    print("y:", y)
    return jnp.dot(x + 1, y + 1)


JITSCOPE_EXAMPLES = {
    # x = y = jnp.array([1.0, 2.0])
    "f": "f32[2], f32[2]",
}

if __name__ == "__main__":
    x = jnp.array([1.0, 2.0])
    y = jnp.array([1.0, 2.0])
    print(f(x, y))
    print(jax.make_jaxpr(f)(x, y))
