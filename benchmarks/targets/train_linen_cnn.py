"""``run_overhead.py --model linen-cnn``: a small CNN in flax linen with a ``TrainState``, trained with optax adamw
under ``jax.jit`` (ends with ``state`` and ``step(state) -> state``, as every ``train_*.py`` here)."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(16, (3, 3))(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = nn.Conv(32, (3, 3))(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(64)(x)
        x = nn.relu(x)
        return nn.Dense(10)(x)


@jax.jit
def train_step(state, images, labels):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


model = CNN()
params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 16, 16, 1)))["params"]
images = jax.random.normal(jax.random.PRNGKey(1), (16, 16, 16, 1))
labels = jax.random.randint(jax.random.PRNGKey(2), (16,), 0, 10)


def step(state):
    return train_step(state, images, labels)[0]


state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adamw(1e-3))
