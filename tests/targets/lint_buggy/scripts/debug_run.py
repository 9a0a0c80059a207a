import jax


@jax.jit
def debug(x):
    print("tracing debug")  # JS101, ignored for scripts/* by per-file-ignores
    return x
