"""``run_overhead.py --model eqx-mlp``: an equinox MLP trained with optax adam under ``eqx.filter_jit``, the
equinox way: the model is a pytree argument, the step returns the new model and optimizer state (ends with
``state`` and ``step(state) -> state``, as every ``train_*.py`` here)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

model = eqx.nn.MLP(64, 8, width_size=128, depth=3, key=jax.random.PRNGKey(0))
optim = optax.adam(1e-3)


def loss_fn(model, x, y):
    pred = jax.vmap(model)(x)
    return jnp.mean((pred - y) ** 2)


@eqx.filter_jit
def train_step(model, opt_state, x, y):
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model, x, y)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss


x = jax.random.normal(jax.random.PRNGKey(1), (32, 64))
y = jax.random.normal(jax.random.PRNGKey(2), (32, 8))


def step(state):
    model, opt_state = state
    model, opt_state, _ = train_step(model, opt_state, x, y)
    return model, opt_state


state = (model, optim.init(eqx.filter(model, eqx.is_array)))
