"""Effects in code shapes whose bytecode differs between Python versions.

Comprehensions are inlined into their function on 3.12+ (PEP 709) and are frames of
their own on 3.11; generators and coroutines start and stop several times; 3.13 fuses
loads and stores into super-instructions and passes keyword names with CALL_KW. Each
marked line must be reported the same way on every version.
"""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)

CALLS: list[int] = []
SETTINGS: dict[str, object] = {"scale": 1.0}
LAST = 0
REGISTRY: dict[int, object] = {}


def multi_line_call(x):
    logger.info(  # effect: multi-line-call
        "shape %s",
        x.shape,
    )
    SETTINGS[  # effect: multi-line-store
        "multi"
    ] = 1
    return x


def comprehensions(x, params):
    global LAST
    [CALLS.append(i) for i in range(2)]  # effect: listcomp-append
    {print(i) for i in range(1)}  # effect: setcomp-print
    total = sum(CALLS.append(i) or i for i in range(2))  # effect: genexpr-append
    [(LAST := i) for i in range(3)]  # effect: walrus-global
    local = [(kept := v) for v in params]  # a walrus to a local is no effect
    return x + total + len(local) + len(kept)


def _fills(settings):
    settings["gen-first"] = 1  # effect: gen-first
    yield 1
    CALLS.append(2)  # effect: gen-second
    yield 2


async def _fills_async(settings):
    settings["async"] = 1  # effect: async-item
    return 3


def generators_and_coroutines(x):
    values = list(_fills(SETTINGS))
    coroutine = _fills_async(SETTINGS)
    try:
        coroutine.send(None)
    except StopIteration as done:
        values.append(done.value)
    return x + sum(values)


def _mutates_then_raises(params):
    params["before-raise"] = 1  # effect: raise-item
    raise ValueError("helper failed")


def exceptions(x, params):
    try:
        _mutates_then_raises(params)
    except ValueError:
        print("caught")  # effect: except-print
    try:
        return x
    finally:
        CALLS.append(0)  # effect: finally-append


def slices_and_in_place(x, history):
    global SETTINGS
    CALLS[:] = [1, 2]  # effect: global-slice
    del history[:1]  # effect: arg-slice-del
    SETTINGS |= {"merged": True}  # effect: global-inplace
    a, b = history[0], REGISTRY  # 3.13: STORE_FAST_STORE_FAST
    b[0] = a  # effect: via-local
    logger.warning("%s", a, extra={"k": 1})  # effect: call-kw
    return x


def local_closures_are_no_effect(x):
    count = 0
    seen: list[int] = []

    def bump():
        nonlocal count
        count += 1
        seen.append(count)

    bump()
    bump()
    return x + count + len(seen)


def _counts_throws(settings):
    try:
        yield 1
    except KeyError:
        settings["thrown"] = 1  # effect: throw-item
        yield 2


def generator_throw(x):
    generator = _counts_throws(SETTINGS)
    next(generator)
    return x + generator.throw(KeyError("k"))
