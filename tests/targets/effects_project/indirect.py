"""Trace-time effects reached indirectly: builtins given to other code, partials, setattr."""

from __future__ import annotations

import functools
import io

import jax

SINK = io.StringIO()
log = functools.partial(print, "step:", file=SINK)


class Model:
    pass


MODEL = Model()


def setattr_on_global(x):
    setattr(MODEL, "h", x)  # noqa: B010  # effect: setattr-global
    return x


def setattr_on_a_fresh_object(x):
    out = Model()
    setattr(out, "h", x)  # noqa: B010
    return x


def partial_print(x):
    log(x)  # effect: partial-print
    return x


def print_through_tree_map(x):
    jax.tree_util.tree_map(print, {"a": x})  # effect: tree-map-print
    return x


def print_through_map(x):
    list(map(print, [x]))  # effect: map-print
    return x


def print_through_local_partial(x):
    show = functools.partial(print, "x:", file=SINK)
    show(x)  # effect: local-partial-print
    return x


def print_through_filter_of_argument(x, fn=print):
    list(filter(fn, [x]))  # effect: filter-print
    return x


def map_and_partial_of_pure_functions(x):
    double = functools.partial(jax.numpy.multiply, 2.0)
    ys = list(map(jax.numpy.sin, [double(x)]))
    return ys[0]


def debug_print_is_not_an_effect(x):
    jax.tree_util.tree_map(lambda v: jax.debug.print("{}", v), {"a": x})
    jax.debug.callback(print, x)
    return x
