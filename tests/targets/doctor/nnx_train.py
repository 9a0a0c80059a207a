"""A flax nnx training loop: nnx.jit donates (or not) by its own rules, so doctor has no memory finding here,
and its analysis never re-jits nnx's own wrapper as if it were the user's jax.jit."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(16, 32, rngs=rngs)
        self.l2 = nnx.Linear(32, 4, rngs=rngs)

    def __call__(self, x):
        return self.l2(jax.nn.relu(self.l1(x)))


model = MLP(nnx.Rngs(0))
try:
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
except TypeError:  # flax < 0.11: no wrt
    optimizer = nnx.Optimizer(model, optax.sgd(0.1))


@nnx.jit
def step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(lambda m: optax.softmax_cross_entropy_with_integer_labels(m(x), y).mean())(model)
    try:
        optimizer.update(model, grads)
    except TypeError:  # flax < 0.11: update(grads)
        optimizer.update(grads)
    return loss


x, y = jnp.ones((8, 16)), jnp.zeros((8,), jnp.int32)
for _ in range(3):
    loss = step(model, optimizer, x, y)
print(float(loss))
