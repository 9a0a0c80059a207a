"""A Megatron-style tensor-parallel MLP layer on a 2-D mesh (``data`` x ``model``).

    jitscope trace examples/sharded_tensor_parallel.py:mlp_layer --mesh data=4,model=2 --stages memory

The first weight is split by columns over ``model`` and the second by rows, so each device
computes a slice of the hidden layer without talking to the others, and one all-reduce over
the ``model`` axis sums the partial outputs (Shoeybi et al., 2019). The batch is split over
``data``; the sharding constraint keeps the output laid out like the input.
"""

import jax
from jax.sharding import PartitionSpec as P

JITSCOPE_EXAMPLES = {
    "mlp_layer": {"shapes": "{'w_in': f32[512,2048]@(None,model), 'w_out': f32[2048,512]@(model,None)}, "
                  "f32[64,512]@(data,None)", "mesh": "data=4,model=2"},
}


@jax.jit
def mlp_layer(params, x):
    h = jax.nn.gelu(x @ params["w_in"])  # column-parallel: no communication
    out = h @ params["w_out"]  # row-parallel: partial sums, all-reduced over 'model'
    return jax.lax.with_sharding_constraint(out, P("data", None)) + x
