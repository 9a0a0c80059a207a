"""An Elman RNN over a sequence with ``jax.lax.scan``: one loop body in the jaxpr, not T copies.

    jitscope trace examples/scan_rnn.py:rnn
    jitscope trace examples/scan_rnn.py:rnn --depth 1
"""

import jax
import jax.numpy as jnp


def rnn_cell(params, h, x_t):
    h = jnp.tanh(x_t @ params["wx"] + h @ params["wh"] + params["b"])
    return h, h @ params["wo"]


@jax.jit
def rnn(params, xs, h0):
    """Run the cell over the time axis of ``xs`` [T, batch, in]; return outputs [T, batch, out]."""
    h_final, ys = jax.lax.scan(lambda h, x_t: rnn_cell(params, h, x_t), h0, xs)
    return ys, h_final


JITSCOPE_EXAMPLES = {
    "rnn": "{'wx': f32[16,64], 'wh': f32[64,64], 'b': f32[64], 'wo': f32[64,8]}, f32[100,32,16], f32[32,64]",
}

if __name__ == "__main__":
    k = jax.random.split(jax.random.key(0), 5)
    params = {
        "wx": jax.random.normal(k[0], (16, 64)) * 0.1,
        "wh": jax.random.normal(k[1], (64, 64)) * 0.1,
        "b": jnp.zeros(64),
        "wo": jax.random.normal(k[2], (64, 8)) * 0.1,
    }
    ys, h = rnn(params, jax.random.normal(k[3], (100, 32, 16)), jnp.zeros((32, 64)))
    print(ys.shape, h.shape)
