"""A two-layer MLP classifier with a jitted SGD training step.

    jitscope trace examples/mlp.py:train_step
    jitscope bench examples/mlp.py:train_step
"""

from functools import partial

import jax
import jax.numpy as jnp


def init_params(key, sizes=(784, 512, 10)):
    keys = jax.random.split(key, len(sizes) - 1)
    return {
        f"layer{i}": {
            "w": jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m),
            "b": jnp.zeros((n,)),
        }
        for i, (k, m, n) in enumerate(zip(keys, sizes[:-1], sizes[1:]))
    }


def predict(params, x):
    h = x
    for i in range(len(params)):
        layer = params[f"layer{i}"]
        h = h @ layer["w"] + layer["b"]
        if i < len(params) - 1:
            h = jax.nn.relu(h)
    return h


def loss_fn(params, x, labels):
    logits = predict(params, x)
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))


@partial(jax.jit, static_argnames=("learning_rate",), donate_argnums=(0,))
def train_step(params, x, labels, learning_rate=0.1):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    params = jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads)
    return params, loss


_PARAMS = "{'layer0': {'w': f32[784,512], 'b': f32[512]}, 'layer1': {'w': f32[512,10], 'b': f32[10]}}"

JITSCOPE_EXAMPLES = {
    "train_step": f"{_PARAMS}, f32[128,784], i32[128]",
    "predict": f"{_PARAMS}, f32[128,784]",
}

if __name__ == "__main__":
    params = init_params(jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (128, 784))
    labels = jax.random.randint(jax.random.key(2), (128,), 0, 10)
    for step in range(3):
        params, loss = train_step(params, x, labels)
        print(step, float(loss))
