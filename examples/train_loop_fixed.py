"""``examples/train_loop.py`` with its four recompiles fixed: every jitted function compiles once.

    jitscope run --fail-on-recompile examples/train_loop_fixed.py

1. the ragged last batch is padded to the batch size, with a mask so padding does not count;
2. the learning rate is always an f32[] array;
3. evaluation has its own jitted function (one compile each, no static flag flipping);
4. the accuracy metric is jitted once, at module level.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

N_EXAMPLES, BATCH, FEATURES, CLASSES, EPOCHS = 200, 64, 16, 4, 3


def init_params(key: jax.Array) -> dict[str, jax.Array]:
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (FEATURES, 32)) * 0.1, "b1": jnp.zeros(32),
            "w2": jax.random.normal(k2, (32, CLASSES)) * 0.1, "b2": jnp.zeros(CLASSES)}


def logits_fn(params: dict[str, jax.Array], x: jax.Array, training: bool) -> jax.Array:
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    if training:
        h = h * 0.9
    return h @ params["w2"] + params["b2"]


def loss_fn(params: dict[str, jax.Array], x: jax.Array, y: jax.Array, mask: jax.Array, training: bool) -> jax.Array:
    logits = logits_fn(params, x, training)
    per_example = -jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, CLASSES), axis=-1)
    return jnp.sum(per_example * mask) / jnp.maximum(jnp.sum(mask), 1.0)


@jax.jit
def train_step(params, x, y, mask, lr):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y, mask, True)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss


@jax.jit
def eval_loss(params, x, y):
    return loss_fn(params, x, y, jnp.ones(x.shape[0]), False)


@jax.jit
def accuracy(params, x, y):
    return jnp.mean(jnp.argmax(logits_fn(params, x, False), -1) == y)


def learning_rate(epoch: int) -> jax.Array:
    return jnp.asarray(0.1 * 0.5**epoch, dtype=jnp.float32)


def batches(x: np.ndarray, y: np.ndarray):
    for start in range(0, len(x), BATCH):
        xb, yb = x[start:start + BATCH], y[start:start + BATCH]
        pad = BATCH - len(xb)
        mask = np.r_[np.ones(len(xb)), np.zeros(pad)].astype(np.float32)
        yield np.pad(xb, ((0, pad), (0, 0))), np.pad(yb, (0, pad)), mask


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N_EXAMPLES, FEATURES)).astype(np.float32)
    y = rng.integers(0, CLASSES, size=N_EXAMPLES)
    params = init_params(jax.random.PRNGKey(0))
    for epoch in range(EPOCHS):
        lr = learning_rate(epoch)
        for xb, yb, mask in batches(x, y):
            params, loss = train_step(params, xb, yb, mask, lr)
        print(f"epoch {epoch}: loss {float(loss):.3f}, eval loss {float(eval_loss(params, x[:BATCH], y[:BATCH])):.3f}, "
              f"accuracy {float(accuracy(params, x, y)):.2f}")


if __name__ == "__main__":
    main()
