"""User code that exits, crashes or tampers with the process while jitscope runs it (issue 25)."""
import os
import sys

import jax
import jax.numpy as jnp


def exits(x):
    sys.exit(7)  # EXIT-LINE


def hard_exit(x):
    os._exit(5)  # HARD-EXIT-LINE


def segfault(x):
    import ctypes

    ctypes.string_at(0)  # SEGFAULT-LINE
    return x


def closes_stdout(x):
    sys.stdout.close()
    return x * 2


def closes_fd1(x):
    os.close(1)
    return x * 2


def clears_path(x):
    sys.path.clear()
    return x + 1


def replaces_jit(x):
    jax.jit = lambda f, **kw: f
    return jnp.sin(x)


def closes_stderr(x):
    sys.stderr.close()
    return x * 2


def closes_fd2(x):
    os.close(2)
    return x * 2


def forks(x):
    if os.fork() == 0:
        print("child traced")  # the child ends here, when the function returns, without a report of its own
        return x
    os.wait()
    return x + 1
