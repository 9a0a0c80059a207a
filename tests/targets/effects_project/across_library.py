"""User code that calls into stand_in_library.py: the effect monitor must keep seeing this code's
effects after each way control comes back from the library (return, exception, yield, callback)."""

import jax.numpy as jnp

from effects_project import stand_in_library as lib


def prints_after_library_raised(x):
    try:
        lib.fails(x)
    except ValueError:
        pass
    print("after")  # effect: after-raise
    return x


def prints_between_generator_steps(x):
    for v in lib.values(x):
        print("step")  # effect: generator-loop
        x = x + v
    return x


def prints_around_a_callback(x):
    y = lib.call_back(_callback, x)
    print("after callback")  # effect: after-callback
    return y


def _callback(v):
    print("in callback")  # effect: in-callback
    return jnp.sin(v)


def prints_through_library(x):
    lib.apply(print, x)  # effect: handed-to-library
    return x
