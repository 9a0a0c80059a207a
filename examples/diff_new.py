"""``jitscope diff``'s example: ``diff_old.py`` after a change: a variable renamed, the hidden layer normalised.

    jitscope diff examples/diff_old.py:predict examples/diff_new.py:predict
"""

import jax
import jax.numpy as jnp


@jax.jit
def predict(params, x):
    hidden = jnp.tanh(x @ params["w1"])
    hidden = hidden / jnp.linalg.norm(hidden, axis=-1, keepdims=True)
    return hidden @ params["w2"]


JITSCOPE_EXAMPLES = {"predict": "{'w1': f32[256,512], 'w2': f32[512,10]}, f32[64,256]"}
