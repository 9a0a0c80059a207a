"""Traced functions with every kind of trace-time side effect, one per marked line."""

from __future__ import annotations

import datetime
import logging
import operator
import os
import random
import socket
import subprocess
import sys
import time
import uuid

import jax
import jax.numpy as jnp
import numpy as np

from effects_project import helpers

logger = logging.getLogger(__name__)

CALLS: list[int] = []
SETTINGS: dict[str, float] = {"scale": 1.0}
STEP = 0


def noisy_step(x, params, history):
    global STEP
    print("tracing noisy_step")  # effect: print
    print("to stderr", file=sys.stderr)  # effect: print-stderr
    sys.stdout.write("tracing\n")  # effect: stdout-write
    logger.info("tracing with %s", x.shape)  # effect: logger-info
    logging.warning("root logger at trace time")  # effect: logging-warning  # noqa: LOG015
    started = time.perf_counter()  # effect: perf-counter
    stamp = datetime.datetime.now()  # effect: datetime-now
    noise = random.random()  # effect: random-random
    pick = random.randint(0, 3)  # effect: random-randint
    legacy = np.random.randint(0, 10)  # effect: np-legacy
    generator = np.random.default_rng(0)
    draw = generator.normal()  # effect: np-generator
    token = uuid.uuid4()  # effect: uuid4
    entropy = os.urandom(4)  # effect: urandom
    names = os.listdir(os.path.dirname(__file__))  # effect: listdir
    STEP += 1  # effect: global-store
    CALLS.append(STEP)  # effect: global-append
    SETTINGS["scale"] = 2.0  # effect: global-item
    helpers.LAST_SHAPE = x.shape  # effect: module-attr
    params["seen"] = True  # effect: arg-item
    history.append(len(names))  # effect: arg-append
    helpers.remember(history, 1)
    helpers.record_shape(x)
    unused = (started, stamp, noise, pick, legacy, draw, token, entropy)
    del unused
    return jnp.tanh(helpers.scale(x, params["w"]))


def talks_to_the_outside(x):
    completed = subprocess.run([sys.executable, "-c", "pass"], check=True)  # effect: subprocess
    with socket.socket() as sock:  # effect: socket
        del sock
    os.environ["JITSCOPE_EFFECTS_FIXTURE"] = "1"  # effect: environ
    del os.environ["JITSCOPE_EFFECTS_FIXTURE"]  # effect: environ-del
    return x + completed.returncode


def make_counter_step():
    seen: list[int] = []
    counts = {"n": 0}
    total = 0

    def counter_step(x):
        nonlocal total
        seen.append(1)  # effect: closure-append
        counts["n"] += 1  # effect: closure-item
        total += 1  # effect: nonlocal
        return x + 1

    return counter_step


counter_step = make_counter_step()


class Model:
    def __init__(self) -> None:
        self.calls = 0
        self.cache: dict[str, object] = {}

    def apply(self, x):
        self.calls += 1  # effect: self-attr
        self.cache["last"] = x.shape  # effect: self-cache-item
        return x * 2


MODEL = Model()


def uses_global_model(x):
    MODEL.calls += 1  # effect: global-object-attr
    return MODEL.apply(x)


def busy_but_pure(x, params):
    """Builds and mutates only its own containers and objects: no effects."""
    out = {}
    out["y"] = x * params["w"]
    acc: list[int] = []
    for i in range(3):
        acc.append(i + 1)
    box = Model()
    box.calls += 1
    box.cache["k"] = 1

    def inner():
        acc.append(4)

    inner()
    rng_key_names = [name for name in params]
    return out["y"] + len(acc) + len(rng_key_names)


def setdefault_on_existing_key(x, params):
    params.setdefault("w", 0)  # present already: not a mutation
    return x * params["w"]


def mutates_in_other_ways(x, params, history, options):  # effect: library-mutation
    history += [1]  # effect: arg-inplace
    del params["drop"]  # effect: arg-del
    operator.setitem(options, "k", 1)  # a C function mutates it: jitscope cannot see the line
    return x * params["w"]


def scans_with_a_noisy_body(x):
    def body(carry, _):
        print("scan body traced")  # effect: scan-body-print
        return carry * 2, None

    y, _ = jax.lax.scan(body, x, None, length=3)
    return y
