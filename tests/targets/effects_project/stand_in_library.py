"""Stands in for a library in tests/effects/test_effects_across_library.py (its ``is_user_file`` says so):
code the user's functions in across_library.py call into, which raises, yields, calls back."""


def fails(x):
    raise ValueError("library code failed")


def values(x):
    yield x
    yield x + 1


def call_back(fn, x):
    return fn(x)


def apply(fn, x):
    fn(x)
    return x
