"""print reached from C code in ways a profile hook cannot see: partials held in attributes and
items, made by a factory or through an alias of functools.partial, and print given to C callers."""

from __future__ import annotations

import functools
import io
from functools import partial as bind

SINK = io.StringIO()
HANDLERS = {"info": functools.partial(print, "info:", file=SINK)}


def make_logger(prefix):
    return functools.partial(print, prefix, file=SINK)


def make_scaler(factor):
    return functools.partial(float.__mul__, factor)


class Logger:
    def __init__(self):
        self.log = functools.partial(print, "model:", file=SINK)


class Step:
    log = staticmethod(functools.partial(print, "class:", file=SINK))

    def __init__(self):
        self.show = functools.partial(print, "step:", file=SINK)

    def helper(self, x):
        return x

    def run(self, x):
        self.show(x)  # effect: self-partial
        self.log(x)  # effect: class-partial
        return self.helper(x)


LOGGER = Logger()
STEP = Step()


def print_through_attribute(x):
    LOGGER.log(x)  # effect: attribute-partial
    return x


def print_through_method(x):
    return STEP.run(x)


def print_through_item(x):
    HANDLERS["info"](x)  # effect: item-partial
    return x


def print_through_factory(x):
    log = make_logger("f:")
    log(x)  # effect: factory-partial
    return x


def print_through_renamed_partial(x):
    show = bind(print, file=SINK)
    show(x)  # effect: renamed-partial
    return x


def print_as_sort_key(x):
    sorted([x], key=print)  # effect: sort-key-print
    return x


def print_through_reduce(x):
    functools.reduce(print, [x, x])  # effect: reduce-print
    return x


def pure_neighbours(x):
    scale = make_scaler(2.0)
    scale(1.0)
    sorted([1, 2], key=abs)
    functools.reduce(max, [1, 2])
    return STEP.helper(x)
