"""``run_overhead.py --model haiku-mlp``: ``hk.transform`` of an MLP with layer norm, a jitted update of
(params, opt_state, batch) with optax adam, as haiku's examples write it (ends with ``state`` and
``step(state) -> state``, as every ``train_*.py`` here)."""

import haiku as hk
import jax
import jax.numpy as jnp
import optax


def forward(x):
    x = hk.Linear(128)(x)
    x = hk.LayerNorm(axis=-1, create_scale=True, create_offset=True)(x)
    x = jax.nn.gelu(x)
    x = hk.Linear(128)(x)
    x = jax.nn.gelu(x)
    return hk.Linear(10)(x)


net = hk.without_apply_rng(hk.transform(forward))
optim = optax.adam(1e-3)


def loss_fn(params, x, y):
    logits = net.apply(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@jax.jit
def update(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optim.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


x = jax.random.normal(jax.random.PRNGKey(1), (32, 64))
y = jax.random.randint(jax.random.PRNGKey(2), (32,), 0, 10)
params = net.init(jax.random.PRNGKey(0), x)


def step(state):
    params, opt_state, _ = update(*state, x, y)
    return params, opt_state


state = (params, optim.init(params))
