"""Jitted helpers used inside jax.checkpoint, lax.scan and vmap of a jitted function, and grad of a jitted
function called from plain Python (JAX compiles its jvp and transpose under their own names)."""
import jax
import jax.numpy as jnp


@jax.jit
def layer(w, x):
    return jnp.tanh(x @ w)


@jax.jit
def model(ws, x):
    def body(h, w):
        return jax.checkpoint(layer)(w, h), None

    h, _ = jax.lax.scan(body, x, ws)
    return jax.vmap(lambda row: jnp.sum(layer(ws[0], row)))(h)


@jax.jit
def loss(w, x):
    return jnp.sum(layer(w, x) ** 2)


ws, x = jnp.ones((3, 4, 4)) * 0.1, jnp.ones((2, 4))
print(model(ws, x).shape)
print(model(ws, x[:1]).shape)  # a new batch size: one recompile of model
g = jax.grad(loss)(ws[0], x)  # grad of a jitted function, from plain Python
g = jax.grad(loss)(ws[0], x)  # cached
print(g.shape, jax.jit(jax.grad(loss))(ws[0], x).shape)
