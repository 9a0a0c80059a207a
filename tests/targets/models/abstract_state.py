"""Abstract training state, as `jax.eval_shape` makes it: nothing is allocated until jitscope needs values.

A flax linen `TrainState` (with a dropout key) and an equinox module whose leaves are all
`jax.ShapeDtypeStruct`; `bench` and `profile` make concrete values for them, as for `--shapes`.
"""

import equinox as eqx
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.relu(nn.Dense(32)(x))
        x = nn.Dropout(0.1, deterministic=not train)(x)
        return nn.Dense(4)(x)


def create_state():
    model = MLP()
    params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 16)), train=False)["params"]
    return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(1e-3))


state = jax.eval_shape(create_state)


@jax.jit
def linen_step(state, x, y, dropout_key):
    def loss_fn(params):
        pred = state.apply_fn({"params": params}, x, train=True, rngs={"dropout": dropout_key})
        return jnp.mean((pred - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


class Net(eqx.Module):
    hidden: eqx.nn.Linear
    out: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.hidden = eqx.nn.Linear(16, 32, key=k1)
        self.out = eqx.nn.Linear(32, 4, key=k2)

    def __call__(self, x):
        return self.out(jax.nn.relu(self.hidden(x)))


net = jax.eval_shape(Net, jax.random.PRNGKey(0))


@eqx.filter_jit
def eqx_step(net, x, y):
    def loss_fn(net):
        return jnp.mean((jax.vmap(net)(x) - y) ** 2)

    loss, grads = eqx.filter_value_and_grad(loss_fn)(net)
    return jax.tree.map(lambda p, g: p - 1e-3 * g, net, grads), loss


_x, _y = jax.ShapeDtypeStruct((8, 16), jnp.float32), jax.ShapeDtypeStruct((8, 4), jnp.float32)
JITSCOPE_EXAMPLES = {
    "linen_step": {"args": (state, _x, _y, jax.ShapeDtypeStruct((2,), jnp.uint32))},
    "eqx_step": {"args": (net, _x, _y)},
}
