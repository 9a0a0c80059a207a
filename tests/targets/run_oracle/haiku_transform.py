"""haiku: `hk.transform` of an MLP, a jitted update of (params, opt_state, batch) with optax sgd."""
import haiku as hk
import jax
import jax.numpy as jnp
import optax


def forward(x):
    return hk.nets.MLP([16, 4])(x)


net = hk.without_apply_rng(hk.transform(forward))
optim = optax.sgd(0.1)


@jax.jit
def update(params, opt_state, x, y):
    def loss_fn(p):
        return jnp.mean((net.apply(p, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = optim.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


x, y = jnp.ones((8, 3)), jnp.zeros((8, 4))
params = net.init(jax.random.PRNGKey(0), x)
opt_state = optim.init(params)
for _ in range(3):
    params, opt_state, loss = update(params, opt_state, x, y)
print(float(jax.jit(net.apply)(params, x).sum()))
