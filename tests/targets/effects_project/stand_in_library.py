"""Stands in for a library in tests/effects/test_effects_gated.py (its ``is_user_file`` says so):
code the user's functions in across_library.py call into, which raises, yields, calls back."""

import sys

#: What ``sys.getprofile()`` was where each function looked: ("library" | "user", hook or None).
SEEN: list[tuple[str, object]] = []


def look(x):
    SEEN.append(("library", sys.getprofile()))
    return x


def fails(x):
    raise ValueError("library code failed")


def values(x):
    yield x
    SEEN.append(("library", sys.getprofile()))
    yield x + 1


def call_back(fn, x):
    return fn(x)


def apply(fn, x):
    fn(x)
    return x
