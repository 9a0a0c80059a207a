"""flax linen: a small CNN with a TrainState, trained with optax adamw under `jax.jit`."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(8, (3, 3))(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(32)(x)
        x = nn.relu(x)
        return nn.Dense(10)(x)


model = CNN()
params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 8, 8, 1)))["params"]
state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adamw(1e-3))


@jax.jit
def train_step(state, images, labels):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    state = state.apply_gradients(grads=grads)
    return state, loss


JITSCOPE_EXAMPLES = {
    "train_step": {"args": (state, jax.ShapeDtypeStruct((4, 8, 8, 1), jnp.float32),
                            jax.ShapeDtypeStruct((4,), jnp.int32))},
}
