"""Abstract state as users build it: `jax.eval_shape` at module level (three times, each around a fresh
lambda, as code that sizes its buffers does), then a jitted step called with two batch shapes, and eager
ops between. JAX compiles nothing for `eval_shape`: it traces only."""
import jax
import jax.numpy as jnp


def init(key, n):
    return {"w": jax.random.normal(key, (n, n)), "b": jnp.zeros(n)}


SHAPES = [jax.eval_shape(lambda k: init(k, n), jax.random.key(0)) for n in (8, 8, 16)]


@jax.jit
def step(params, x):
    return jax.tree.map(lambda p: p * 0.5, params), jnp.tanh(x @ params["w"] + params["b"]).sum()


params = init(jax.random.key(1), 8)
for batch in (4, 4, 3):
    params, loss = step(params, jnp.ones((batch, 8)))
print(float(loss) + jnp.arange(3).sum())
