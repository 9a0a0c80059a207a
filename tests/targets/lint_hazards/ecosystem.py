"""Equinox, Flax and haliax-style jit wrappers hold Python values static."""

import equinox as eqx
import jax
import jax.numpy as jnp
from flax import nnx


@eqx.filter_jit
def integrate(y0, n_steps, dt):
    y = y0
    for _ in range(n_steps):
        y = y + dt * jnp.sin(y)
    return y


@nnx.jit
def nnx_step(model, x, repeats):
    for _ in range(repeats):
        x = model(x)
    return x


def solve(y0):
    out = []
    for n in range(1, 50):
        out.append(integrate(y0, n, 0.01))  # expect: JS302
    return out


def refine(model, x):
    for r in range(1, 6):
        x = nnx_step(model, x, r)  # expect: JS302
    return x


def rollouts(y0, rates):
    outs = []
    for rate in rates:
        stepper = eqx.filter_jit(lambda y: y * rate)  # expect: JS303
        outs.append(stepper(y0))
    return outs


def solve_ok(y0):
    return integrate(y0, 100, 0.01)
