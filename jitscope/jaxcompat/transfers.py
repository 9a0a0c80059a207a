"""Device-to-host copies of ``jax.Array`` values, seen as the program makes them.

``float(loss)``, ``loss.item()``, ``np.asarray(x)``, ``print(x)`` and ``jax.device_get(x)`` all read an
array's value through one private property, ``ArrayImpl._value`` (JAX 0.4.38 to 0.10 at least), which copies
it to the host the first time, waiting for the device to finish computing it. Wrapping that property is the
only hook that sees every such copy with the Python stack that asked for it; it costs one attribute test
on a value already on the host.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def watch_fetches(on_fetch: Callable[[float, float, str], None]) -> Callable[[], None] | None:
    """Call ``on_fetch(started, ended, platform)`` (``time.perf_counter`` seconds; "cpu", "gpu", ...) after
    each copy of an array's value to the host, from inside the copy (the stack above is the code that asked
    for it). Returns the function that stops watching, or None where this JAX reads values some other way."""
    try:
        from jax._src.array import ArrayImpl
    except ImportError:
        return None
    original = ArrayImpl.__dict__.get("_value")
    if not isinstance(original, property) or original.fget is None:
        return None
    read = original.fget
    clock = time.perf_counter

    def _value(self: Any) -> Any:
        if getattr(self, "_npy_value", None) is not None:
            return read(self)  # already on the host: no copy, no wait
        started = clock()
        try:
            return read(self)
        finally:
            on_fetch(started, clock(), _platform(self))

    ArrayImpl._value = property(_value, doc=original.__doc__)  # type: ignore[method-assign]

    def stop() -> None:
        ArrayImpl._value = original  # type: ignore[method-assign]

    return stop


def _platform(array: Any) -> str:
    try:
        return str(next(iter(array.sharding.device_set)).platform)
    except Exception:  # noqa: BLE001 - a deleted or odd array: the platform is only a label
        return ""
