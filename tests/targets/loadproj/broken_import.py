import jax

VALUE = 1


def helper():
    return undefined_name  # noqa: F821


helper()
