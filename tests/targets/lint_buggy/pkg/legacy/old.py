import jax


@jax.jit
def old(x):
    print(x)  # excluded by [tool.jitscope.lint] exclude
    return x
