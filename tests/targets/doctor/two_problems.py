"""Two planted problems of different cost: a large step recompiled for every static learning rate
(expensive), and a tiny jit rebuilt in a loop (cheap). Also a print that runs while JAX traces."""

import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames="lr")
def train_step(params, x, lr):
    def loss(params):
        h = x
        for w in params:  # a deep MLP: a compile that costs something
            h = jnp.tanh(h @ w)
        return jnp.mean(h ** 2)

    grads = jax.grad(loss)(params)
    return [w - lr * g for w, g in zip(params, grads)]


@jax.jit
def metric(params):
    print("computing the metric")  # runs while JAX traces, not on cached calls
    return sum(jnp.sum(w) for w in params)


params = [jnp.ones((64, 64)) * 0.01 for _ in range(12)]
x = jnp.ones((32, 64))
for step in range(10):
    params = train_step(params, x, lr=0.1 / (step + 1))
for _ in range(16):  # enough recompiles to stand well above the noise floor (1% of the run, 50 ms)
    norm = jax.jit(lambda v: jnp.sqrt(v))(metric(params))
print(float(norm))
