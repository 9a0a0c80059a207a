"""equinox: an MLP module, `eqx.filter_jit` step taking (model, opt_state, x, y), optax adam."""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax

model = eqx.nn.MLP(8, 2, width_size=16, depth=2, key=jax.random.PRNGKey(0))
optim = optax.adam(1e-2)
opt_state = optim.init(eqx.filter(model, eqx.is_array))


@eqx.filter_jit
def step(model, opt_state, x, y):
    def loss(m):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)

    value, grads = eqx.filter_value_and_grad(loss)(model)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), opt_state, value


x, y = jnp.ones((32, 8)), jnp.zeros((32, 2))
for i in range(4):
    model, opt_state, value = step(model, opt_state, x, y)
model, opt_state, value = step(model, opt_state, x[:7], y[:7])  # ragged: one recompile
print(float(value))
