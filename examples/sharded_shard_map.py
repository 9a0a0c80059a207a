"""``shard_map``: per-device code with explicit collectives (a psum and a ring shift).

    jitscope trace examples/sharded_shard_map.py:normalise_and_shift --mesh data=8 --stages memory

Inside ``shard_map`` each device sees its own block of ``x``. ``psum`` adds the per-device
sums (an all-reduce over ``data``), and ``ppermute`` passes each block to the next device
around the ring (a collective-permute), as ring attention or pipeline stages do.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

try:
    from jax import shard_map  # JAX >= 0.7
except ImportError:  # older JAX
    from jax.experimental.shard_map import shard_map

JITSCOPE_EXAMPLES = {"normalise_and_shift": {"shapes": "f32[1024,256]@(data,None)", "mesh": "data=8"}}


def _mesh():
    return Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def normalise_and_shift(x):
    n = len(jax.devices())

    def per_device(block):
        total = jax.lax.psum(jnp.sum(block), "data")  # one all-reduce of a scalar
        shifted = jax.lax.ppermute(block, "data", [(i, (i + 1) % n) for i in range(n)])
        return shifted / total

    return shard_map(per_device, mesh=_mesh(), in_specs=P("data", None), out_specs=P("data", None))(x)
