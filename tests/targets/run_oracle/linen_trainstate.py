"""flax linen: a CNN with BatchNorm and Dropout, a TrainState holding batch_stats, `train` static (issue 23)."""
from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(8, (3, 3))(x)
        x = nn.BatchNorm(use_running_average=not train)(x)
        x = nn.relu(x)
        x = nn.Dropout(0.1, deterministic=not train)(x)
        x = x.reshape((x.shape[0], -1))
        return nn.Dense(10)(x)

class TrainState(train_state.TrainState):
    batch_stats: dict

@partial(jax.jit, static_argnames=("train",))
def step(state, x, y, key, train):
    def loss_fn(params):
        logits, updates = state.apply_fn({"params": params, "batch_stats": state.batch_stats}, x, train,
                                         rngs={"dropout": key}, mutable=["batch_stats"])
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), updates
    (loss, updates), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    state = state.apply_gradients(grads=grads).replace(batch_stats=updates["batch_stats"])
    return state, loss

model = CNN()
x = jnp.ones((4, 8, 8, 1)); y = jnp.zeros((4,), jnp.int32)
variables = model.init(jax.random.PRNGKey(0), x, False)
state = TrainState.create(apply_fn=model.apply, params=variables["params"], tx=optax.adam(1e-3),
                          batch_stats=variables["batch_stats"])
key = jax.random.PRNGKey(1)
for i in range(5):
    key, sub = jax.random.split(key)
    state, loss = step(state, x, y, sub, train=True)
state, loss = step(state, x, y, key, train=False)
print(float(loss))
