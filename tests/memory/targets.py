"""Functions whose peak is known by construction, for the memory tests (the line numbers are asserted)."""

import jax
import jax.numpy as jnp


def big_intermediate(x):
    small = jnp.sin(x)
    huge = jnp.sort(jnp.outer(small, small), axis=0)  # f32[2048,2048]: 16 MiB, the peak's largest buffer
    return huge[0] + small


def carried(c, xs):
    def body(c, x):
        c = jnp.tanh(c * x.sum())
        return c, None

    c, _ = jax.lax.scan(body, c, xs)
    return c


def update(state, delta):
    return state + delta


donating_update = jax.jit(update, donate_argnums=0)


def loss(w, x):
    h = jnp.tanh(x @ w)  # f32[4096,512]: saved for the backward pass
    h = jnp.sin(h @ w)  # f32[4096,512]: saved too
    return (h ** 2).sum()


grad_loss = jax.grad(loss)


def grad_step(w, x):
    return jax.grad(loss)(w, x)


def helper(h):
    return jnp.exp(h) * 2.0


def calls_helper(x):
    y = helper(x)
    return jnp.outer(y, y).sum()


JITSCOPE_EXAMPLES = {
    "big_intermediate": "f32[2048]",
    "carried": "f32[1024,1024], f32[8,16]",
    "update": "f32[1024,1024], f32[1024,1024]",
    "donating_update": "f32[1024,1024], f32[1024,1024]",
    "grad_loss": "f32[512,512], f32[4096,512]",
    "calls_helper": "f32[1024]",
    "grad_step": "f32[512,512], f32[4096,512]",
}
