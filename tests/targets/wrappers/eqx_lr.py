"""An equinox ``filter_jit`` step called with Python-float learning rates (a schedule), and an nnx and a
``jax.jit`` step taking the same float, whose wrappers trace it instead: one rule per wrapper."""

import equinox as eqx
import jax
import jax.numpy as jnp

try:
    from flax import nnx
except ImportError:  # the nnx contrast needs flax (the test-models extra); equinox's steps do not
    nnx = None

model = eqx.nn.Linear(4, 2, key=jax.random.PRNGKey(0))
X = jax.ShapeDtypeStruct((8, 4), jnp.float32)


@eqx.filter_jit
def step(model, x, lr):
    grads = eqx.filter_grad(lambda m: jnp.mean(jax.vmap(m)(x) ** 2))(model)
    return jax.tree.map(lambda p, g: p - lr * g, model, grads)


@eqx.filter_jit
def sgd(params, x, lr):
    """Arrays and a float only: every argument can be written with --shapes."""
    grads = jax.grad(lambda p: jnp.mean((x @ p["w"]) ** 2))(params)
    return {"w": params["w"] - lr * grads["w"]}


@eqx.filter_jit(donate="all")
def donating_step(model, x, lr):
    """Donates its model and batch, as training loops do: each timed call needs fresh copies."""
    grads = eqx.filter_grad(lambda m: jnp.mean(jax.vmap(m)(x) ** 2))(model)
    return jax.tree.map(lambda p, g: p - lr * g, model, grads)


if nnx is not None:
    class Scaled(nnx.Module):
        def __init__(self) -> None:
            self.w = nnx.Param(jnp.ones((4, 2)))

    nnx_model = Scaled()

    @nnx.jit
    def nnx_step(model, x, lr):
        model.w.value = model.w.value - lr * jnp.mean(x @ model.w.value)
        return jnp.sum(model.w.value)


@jax.jit
def jax_step(params, x, lr):
    return {"w": params["w"] - lr * jnp.mean(x @ params["w"])}


def schedule(lrs=(1e-2, 1e-3)):
    """The user's own loop: what JAX compiles when ``step`` is called with each learning rate."""
    x = jnp.ones((8, 4))
    for lr in lrs:
        step(model, x, lr)


JITSCOPE_EXAMPLES = {
    "step": [{"args": (model, X, 1e-2)}, {"args": (model, X, 1e-3)}],
    "donating_step": {"args": (model, X, 1e-2)},
}
if nnx is not None:
    JITSCOPE_EXAMPLES["nnx_step"] = [{"args": (nnx_model, X, 1e-2)}, {"args": (nnx_model, X, 1e-3)}]
