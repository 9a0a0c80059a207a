import sys

sys.exit(3)


def f(x):
    return x
