"""A data-parallel MLP training step: the batch is split over the ``data`` axis, parameters replicated.

    jitscope trace examples/sharded_data_parallel.py:train_step --mesh data=8 --stages memory
    jitscope bench examples/sharded_data_parallel.py:train_step --mesh data=8

Each device computes the gradients of its slice of the batch; XLA then sums them across
devices with one all-reduce (the gradients of every layer combined into one collective).
On a laptop CPU, ``--mesh data=8`` starts JAX with 8 virtual CPU devices.
"""

import jax
import jax.numpy as jnp

_PARAMS = "{'w1': f32[512,1024]@(), 'b1': f32[1024]@(), 'w2': f32[1024,10]@(), 'b2': f32[10]@()}"
JITSCOPE_EXAMPLES = {
    # the batch (256 examples) split over the 'data' axis; parameters replicated (@()); on 8 devices
    "train_step": {"shapes": f"{_PARAMS}, f32[256,512]@(data,None), i32[256]@(data)", "mesh": "data=8"},
}


def loss_fn(params, x, labels):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))


@jax.jit
def train_step(params, x, labels):
    grads = jax.grad(loss_fn)(params, x, labels)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
