"""Targets for the sharding tests (imported in a process with 8 CPU devices)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

_AXIS_TYPES = {"axis_types": (jax.sharding.AxisType.Auto,)} if hasattr(jax.sharding, "AxisType") else {}
MESH = Mesh(np.array(jax.devices()[:4]), ("data",), **_AXIS_TYPES)

JITSCOPE_EXAMPLES = {
    # a ShapeDtypeStruct carrying its NamedSharding: no --mesh needed
    "scale": {"args": (jax.ShapeDtypeStruct((64, 32), jnp.float32, sharding=NamedSharding(MESH, P("data", None))),)},
}


def scale(x):
    return jnp.sin(x) * 2.0


def fsdp_scan(w, x):
    """Layer weights sharded over data, gathered inside the scan body every iteration (FSDP-style)."""
    def layer(h, w_i):
        return jnp.tanh(h @ w_i), None

    h, _ = jax.lax.scan(layer, x, w)
    return h


def gather_all(x):
    """Asks for the whole array on every device: the partitioner all-gathers the sharded input."""
    return jax.lax.with_sharding_constraint(x, P()) * 2.0


def running_total(x):
    """A cumulative sum along the sharded axis: the partitioner must gather x first (not asked for)."""
    return jnp.cumsum(x, axis=0)


@jax.jit
def total(x):
    return jnp.sum(x)


declared = jax.jit(lambda x: x * 2.0, in_shardings=NamedSharding(MESH, P("data")),
                   out_shardings=NamedSharding(MESH, P()))
