"""Helpers in another module of the project: effects here are user code too."""

from __future__ import annotations

import os
import pathlib

#: Assigned as a module attribute by ``impure.noisy_step``.
LAST_SHAPE: tuple[int, ...] = ()


def record_shape(x):
    print("helper sees", x.shape)  # effect: helper-print
    with open(os.devnull, "w") as sink:  # effect: helper-open
        sink.write(str(x.shape))  # effect: helper-file-write
    return pathlib.Path(__file__).exists()  # effect: helper-path-exists


def scale(x, w):
    return x * w


def remember(history, value):
    history.append(value)  # effect: helper-append
