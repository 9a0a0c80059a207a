"""flax nnx: a small MLP with Dropout, `nnx.jit` train step taking (model, optimizer, batch), nnx.Optimizer."""
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.l1 = nnx.Linear(16, 32, rngs=rngs)
        self.drop = nnx.Dropout(0.1, rngs=rngs)
        self.l2 = nnx.Linear(32, 4, rngs=rngs)

    def __call__(self, x):
        return self.l2(self.drop(nnx.relu(self.l1(x))))


def _optimizer(model):
    try:
        return nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
    except TypeError:  # flax < 0.11: no wrt
        return nnx.Optimizer(model, optax.adamw(1e-3))


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    try:
        optimizer.update(model, grads)
    except TypeError:  # flax < 0.11: update(grads)
        optimizer.update(grads)
    return loss


@nnx.jit
def evaluate(model, x):
    return model(x).argmax(-1)


model = MLP(nnx.Rngs(0))
optimizer = _optimizer(model)
x, y = jnp.ones((8, 16)), jnp.zeros((8,), jnp.int32)
for _ in range(3):
    train_step(model, optimizer, x, y)
train_step(model, optimizer, x[:5], y[:5])  # a shorter last batch: one recompile
model.eval()
print(evaluate(model, x).shape)
