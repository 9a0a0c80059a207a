"""A small simulator in the style of brax/jax-md: hazards listed as missed in issue 21, beside the
static-through-types idioms that must stay quiet."""

from __future__ import annotations

import dataclasses
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


def static_field(**kwargs):
    return dataclasses.field(metadata={"static": True}, **kwargs)


@dataclasses.dataclass(frozen=True)
class System:
    mass: jax.Array
    link_types: str = static_field()
    solver_iterations: int = static_field()

    def num_links(self) -> int:
        return len(self.link_types)


def apply_boundary(u, v):
    u[0, :] = v  # expect: JS204
    return u


@jax.jit
def step(sys: System, q, u, v, stats):
    for _ in range(sys.solver_iterations):
        q = q + jnp.eye(sys.num_links()) @ q
    stats.update(energy=jnp.sum(q**2))  # expect: JS104
    return apply_boundary(u, v), q


@partial(jax.jit, static_argnames=("k",))
def strongest(forces, k):
    return jax.lax.top_k(forces, k)[0]


def report(forces, threshold):
    k = int((forces > threshold).sum())
    return strongest(forces, k=k)  # expect: JS302


def kernel(q, v, *, dt):
    return q + dt * v


def integrate(q, v, dt=0.01):
    return jax.jit(partial(kernel, dt=dt))(q, v)  # expect: JS303


@jax.jit
def energy(q):
    return jnp.sum(q**2)


def trajectory_energies(traj, frame):
    out = []
    for i in range(0, traj.shape[0], frame):
        out.append(energy(traj[i : i + frame]))  # expect: JS304
    return out


def shard_energies(traj, n):
    return [energy(s) for s in np.array_split(traj, n)]  # expect: JS304
