"""A program whose optimised HLO has library calls on CPU: LAPACK for the solve, a host callback for the print."""

import jax
import jax.numpy as jnp


def solve_and_print(a, b):
    x = jnp.linalg.solve(a, b)
    jax.debug.print("sum {}", x.sum())
    return x @ a


def plain(a, b):
    return jnp.tanh(a) + b


JITSCOPE_EXAMPLES = {"solve_and_print": "f32[8,8], f32[8,8]", "plain": "f32[8,8], f32[8,8]"}
