"""haiku: `hk.transform` of an MLP, a jitted update of (params, opt_state, batch) with optax sgd + momentum."""

import haiku as hk
import jax
import jax.numpy as jnp
import optax


def forward(x):
    x = hk.Linear(32)(x)
    x = jax.nn.relu(x)
    return hk.Linear(4)(x)


net = hk.without_apply_rng(hk.transform(forward))
optim = optax.sgd(0.1, momentum=0.9)
params = net.init(jax.random.PRNGKey(0), jnp.ones((1, 16)))
opt_state = optim.init(params)


def loss_fn(params, x, y):
    logits = net.apply(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@jax.jit
def update(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optim.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss


JITSCOPE_EXAMPLES = {
    "update": {"args": (params, opt_state, jax.ShapeDtypeStruct((8, 16), jnp.float32),
                        jax.ShapeDtypeStruct((8,), jnp.int32))},
}
