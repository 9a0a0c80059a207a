import equinox as eqx, jax, jax.numpy as jnp, optax

model = eqx.nn.MLP(16, 4, width_size=64, depth=2, key=jax.random.PRNGKey(0))
optim = optax.adam(1e-3)
opt_state = optim.init(eqx.filter(model, eqx.is_array))

@eqx.filter_jit
def step(model, opt_state, x, y, lr_scale):
    loss, grads = eqx.filter_value_and_grad(lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2))(model)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    updates = jax.tree.map(lambda u: u * lr_scale, updates)
    return eqx.apply_updates(model, updates), opt_state, loss

key = jax.random.PRNGKey(1)
for i in range(6):
    x, y = jax.random.normal(key, (32, 16)), jnp.zeros((32, 4))
    model, opt_state, loss = step(model, opt_state, x, y, 1.0 / (i + 1))  # a Python float: static under filter_jit
print(float(loss))
