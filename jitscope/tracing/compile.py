"""Traced -> Lowered -> Compiled, keeping only what was asked for (``--stages``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection, Iterator
from typing import Any

from jitscope.errors import CompileError
from jitscope.jaxcompat.compile_profile import CompileCapture, capture_compile
from jitscope.jaxcompat import stages as jc
from jitscope.jaxcompat.runtime_errors import device_memory_error
from jitscope.model.trace import StagesRecord

LOWERED_STAGES = frozenset({"stablehlo", "hlo", "cost", "memory"})
COMPILED_STAGES = frozenset({"hlo", "cost", "memory"})


class CompileSkipped(Exception):
    """XLA was not asked to compile (it would crash the process); ``partial`` holds the stages before it."""

    def __init__(self, reason: str, partial: StagesRecord) -> None:
        super().__init__(reason)
        self.reason = reason
        self.partial = partial


def lower_and_compile(traced: Any, stages: Collection[str],
                      on_compiled: Callable[[Any, Any], None] | None = None,
                      capture: CompileCapture | None = None) -> StagesRecord:
    """Lower and compile ``traced`` as far as ``stages`` need; no XLA compile for jaxpr/StableHLO only.

    ``on_compiled(lowered, compiled)`` is called once compiled, for analyses that need the live
    executable (the sharding probe). ``capture`` (``--compile-profile``): the compile runs under the
    profiler and ``capture`` holds its events, also when it fails.
    """
    import jax

    wanted = set(stages)
    if not wanted & LOWERED_STAGES:
        return StagesRecord(backend=jax.default_backend())
    start = time.perf_counter()
    try:
        lowered = traced.lower()
    except Exception as exc:  # noqa: BLE001 - lowering errors are user-facing
        raise device_memory_error(exc, "lowering") or CompileError(
            f"lowering to StableHLO failed: {type(exc).__name__}: {exc}") from None
    lower_seconds = time.perf_counter() - start
    stablehlo = jc.stablehlo_text(lowered) if "stablehlo" in wanted else None
    if not wanted & COMPILED_STAGES:
        return StagesRecord(stablehlo=stablehlo, lower_seconds=lower_seconds, backend=jax.default_backend())
    crash = jc.compile_would_crash(traced)
    if crash is not None:
        raise CompileSkipped(crash, StagesRecord(stablehlo=stablehlo, lower_seconds=lower_seconds,
                                                 backend=jax.default_backend()))
    start = time.perf_counter()
    try:
        with _compiling(capture):
            compiled = lowered.compile()
    except Exception as exc:  # noqa: BLE001
        raise device_memory_error(exc, "compiling") or CompileError(
            f"XLA compilation failed: {type(exc).__name__}: {exc}") from None
    compile_seconds = time.perf_counter() - start
    if on_compiled is not None:
        on_compiled(lowered, compiled)
    return StagesRecord(
        stablehlo=stablehlo,
        hlo=jc.compiled_text(compiled) if "hlo" in wanted else None,
        cost=jc.cost_record(compiled) if "cost" in wanted else None,
        memory=jc.memory_record(compiled) if "memory" in wanted else None,
        lower_seconds=lower_seconds,
        compile_seconds=compile_seconds,
        backend=jax.default_backend(),
    )


@contextlib.contextmanager
def _compiling(capture: CompileCapture | None) -> Iterator[None]:
    """The compile, under the profiler when ``capture`` is given (noting the persistent cache's answer)."""
    if capture is None:
        yield
        return
    from jitscope.jaxcompat.monitoring import watch_compilation

    with watch_compilation(time.perf_counter) as watch:
        try:
            with capture_compile(capture):
                yield
        finally:
            hit = watch.cache_hit
            capture.persistent_cache = "" if hit is None else "hit" if hit else "miss"
