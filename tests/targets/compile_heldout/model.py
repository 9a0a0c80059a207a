"""A held-out program for the compile-time section: one Python loop unrolled among ordinary lines."""

import jax
import jax.numpy as jnp


def layer(x, w, b):
    h = jnp.dot(x, w) + b
    h = jax.nn.gelu(h)
    for _ in range(40):
        h = h * 0.9 + jnp.tanh(h)
    scale = jnp.sqrt(jnp.mean(h * h) + 1e-6)
    return jnp.sum(h / scale, axis=-1)


def broken(x):
    y = jnp.sin(x)
    if hasattr(jax, "ffi"):
        ffi = jax.ffi
    else:  # JAX 0.4.38
        import jax.extend.ffi as ffi
    out = ffi.ffi_call("jitscope_no_such_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(y)
    return out * 2
