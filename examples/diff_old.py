"""``jitscope diff``'s example: a classifier's forward pass before a change (``diff_new.py`` is after).

    jitscope diff examples/diff_old.py:predict examples/diff_new.py:predict
"""

import jax
import jax.numpy as jnp


@jax.jit
def predict(params, x):
    h = jnp.tanh(x @ params["w1"])
    return h @ params["w2"]


JITSCOPE_EXAMPLES = {"predict": "{'w1': f32[256,512], 'w2': f32[512,10]}, f32[64,256]"}
