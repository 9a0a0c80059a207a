"""Parameter sweeps over an equinox model: filter_jit keeps Python values static."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np


@eqx.filter_jit
def simulate(model, y0, n_substeps, dt, damping):
    y = y0
    for _ in range(n_substeps):
        y = y + dt * (model(y) - damping * y)
    return y


@eqx.filter_jit
def apply_transform(model, x, transform):
    return transform(model(x))


def sweep_resolution(model, y0):
    results = {}
    for n in (10, 20, 40, 80, 160, 320):
        results[n] = simulate(model, y0, n, 1.0 / n, 0.1)  # expect: JS302
    return results


def sweep_damping(model, y0):
    return [simulate(model, y0, 10, 0.1, float(d)) for d in np.linspace(0.0, 1.0, 25)]  # expect: JS302


def normalise_all(model, xs, scale):
    return [apply_transform(model, x, lambda v: v / scale) for x in xs]  # expect: JS302


def simulate_ok(model, y0):
    return simulate(model, y0, 100, 0.01, jnp.float32(0.1))
