"""JAX's monitoring events for the phases of a first call, and device memory statistics.

JAX reports how long tracing, lowering to StableHLO and the XLA compile took through
``jax.monitoring`` duration events, and persistent-cache lookups through plain events.
The event names are JAX internals (``jax/_src/dispatch.py`` and ``compiler.py``), so they
live here with fallbacks for the versions we know.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: jax/_src/dispatch.py: JAXPR_TRACE_EVENT, JAXPR_TO_MLIR_MODULE_EVENT, BACKEND_COMPILE_EVENT
_DEFAULT_EVENTS = {
    "trace": "/jax/core/compile/jaxpr_trace_duration",
    "lower": "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "compile": "/jax/core/compile/backend_compile_duration",
}
#: jax/_src/compiler.py: a compile that consulted the persistent cache, and one that was served by it.
CACHE_REQUEST_EVENT = "/jax/compilation_cache/compile_requests_use_cache"
CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"


def phase_events() -> dict[str, str]:
    """Phase name -> JAX duration event name, read from this JAX where it exposes them."""
    from jitscope.jaxcompat.features import dispatch_event_names

    return {**_DEFAULT_EVENTS, **dispatch_event_names()}


@dataclass
class CompileWatch:
    """What JAX reported while the watch was open. Mutable, and lives only inside one measurement."""

    clock: Callable[[], float]
    seconds: dict[str, float] = field(default_factory=dict)  # phase -> summed duration
    counts: dict[str, int] = field(default_factory=dict)  # phase -> number of events
    compile_end: float | None = None  # clock() when the last XLA compile finished
    cache_requests: int = 0
    cache_hits: int = 0

    def phase(self, name: str) -> float | None:
        return self.seconds.get(name)

    @property
    def cache_hit(self) -> bool | None:
        """True/False when the persistent cache was consulted, None when it was not."""
        if not self.cache_requests:
            return None
        return self.cache_hits > 0


@contextlib.contextmanager
def watch_compilation(clock: Callable[[], float]) -> Iterator[CompileWatch]:
    """Collect phase durations and persistent-cache events for the duration of the block."""
    import jax.monitoring as mon

    from jitscope.jaxcompat.features import unregister_listener

    watch = CompileWatch(clock)
    by_event = {event: phase for phase, event in phase_events().items()}

    def on_duration(event: str, duration_secs: float, **kwargs: str | int) -> None:
        phase = by_event.get(event)
        if phase is None:
            return
        if phase == "compile":
            watch.compile_end = clock()
        watch.seconds[phase] = watch.seconds.get(phase, 0.0) + float(duration_secs)
        watch.counts[phase] = watch.counts.get(phase, 0) + 1

    def on_event(event: str, **kwargs: str | int) -> None:
        if event == CACHE_REQUEST_EVENT:
            watch.cache_requests += 1
        elif event == CACHE_HIT_EVENT:
            watch.cache_hits += 1

    mon.register_event_duration_secs_listener(on_duration)
    mon.register_event_listener(on_event)
    try:
        yield watch
    finally:
        unregister_listener("event_duration_listener", on_duration)
        unregister_listener("event_listener", on_event)


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """What the device's allocator reports; CPU devices report nothing."""

    bytes_limit: int | None
    bytes_in_use: int | None
    peak_bytes_in_use: int | None

    @property
    def free(self) -> int | None:
        if self.bytes_limit is None:
            return None
        return self.bytes_limit - (self.bytes_in_use or 0)


def device_memory(device: Any | None = None) -> DeviceMemory | None:
    """``device.memory_stats()`` (GPU/TPU), or None where the backend does not report it."""
    import jax

    device = device if device is not None else jax.devices()[0]
    try:
        stats = device.memory_stats()
    except Exception:  # noqa: BLE001 - unimplemented on some backends
        return None
    if not stats:
        return None

    def get(key: str) -> int | None:
        value = stats.get(key)
        return int(value) if isinstance(value, (int, float)) else None

    return DeviceMemory(get("bytes_limit"), get("bytes_in_use"), get("peak_bytes_in_use"))
