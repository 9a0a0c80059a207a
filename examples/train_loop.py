"""A small training loop that recompiles for four different reasons. Try:

    jitscope run examples/train_loop.py

and compare with ``examples/train_loop_fixed.py``, which compiles each function once.

The four bugs, all common in real code:

1. the last batch of each epoch is ragged (200 examples, batches of 64), a new shape;
2. the learning rate is a Python float in epoch 0 and a jnp array afterwards (the schedule
   returns an array once warm-up ends): a weak-typed f32[] becomes a strong one;
3. evaluation calls the step with ``training=False``, a static argument, so a second program;
4. the accuracy metric is ``jax.jit(lambda ...)`` built on every evaluation: a new function
   object each time, so JAX can never reuse the compiled program.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

N_EXAMPLES, BATCH, FEATURES, CLASSES, EPOCHS = 200, 64, 16, 4, 3


def init_params(key: jax.Array) -> dict[str, jax.Array]:
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (FEATURES, 32)) * 0.1, "b1": jnp.zeros(32),
            "w2": jax.random.normal(k2, (32, CLASSES)) * 0.1, "b2": jnp.zeros(CLASSES)}


def loss_fn(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, training: bool) -> jax.Array:
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    if training:
        h = h * 0.9  # stands in for dropout
    logits = h @ params["w2"] + params["b2"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, CLASSES), axis=-1))


@functools.partial(jax.jit, static_argnames="training")
def step(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, lr: float | jax.Array, training: bool = True):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y, training)
    if training:
        params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return params, loss


def learning_rate(epoch: int) -> float | jax.Array:
    return 0.1 if epoch == 0 else jnp.array(0.1 * 0.5**epoch, dtype=jnp.float32)  # bug 2: float, then an array


def batches(x: np.ndarray, y: np.ndarray):
    for start in range(0, len(x), BATCH):
        yield x[start:start + BATCH], y[start:start + BATCH]  # bug 1: the last batch has 8 rows


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N_EXAMPLES, FEATURES)).astype(np.float32)
    y = rng.integers(0, CLASSES, size=N_EXAMPLES)
    params = init_params(jax.random.PRNGKey(0))
    for epoch in range(EPOCHS):
        lr = learning_rate(epoch)
        for xb, yb in batches(x, y):
            params, loss = step(params, xb, yb, lr)
        _, eval_loss = step(params, x[:BATCH], y[:BATCH], lr, training=False)  # bug 3: a static flag flips
        accuracy = jax.jit(lambda p, xs, ys: jnp.mean(  # bug 4: a new jitted lambda per evaluation
            jnp.argmax(jax.nn.relu(xs @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"], -1) == ys))
        print(f"epoch {epoch}: loss {float(loss):.3f}, eval loss {float(eval_loss):.3f}, "
              f"accuracy {float(accuracy(params, x, y)):.2f}")


if __name__ == "__main__":
    main()
