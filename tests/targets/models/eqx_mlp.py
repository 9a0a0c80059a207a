"""equinox: an MLP trained with optax adam under `eqx.filter_jit`, the equinox way."""

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

model = eqx.nn.MLP(16, 4, width_size=32, depth=2, key=jax.random.PRNGKey(0))
optim = optax.adam(1e-3)
opt_state = optim.init(eqx.filter(model, eqx.is_array))


def loss_fn(model, x, y):
    pred = jax.vmap(model)(x)
    return jnp.mean((pred - y) ** 2)


@eqx.filter_jit
def train_step(model, opt_state, x, y):
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model, x, y)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss


JITSCOPE_EXAMPLES = {
    "train_step": {"args": (model, opt_state, jax.ShapeDtypeStruct((8, 16), jnp.float32),
                            jax.ShapeDtypeStruct((8, 4), jnp.float32))},
}
