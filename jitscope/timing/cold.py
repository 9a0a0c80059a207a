"""The cold first call: fresh jit wrapper, empty in-memory caches, split into phases.

The call is timed from the moment it is made until every output leaf is ready. JAX's
monitoring events split it into trace, lowering to StableHLO and XLA compile; the
first execution runs from the end of the compile until the outputs are ready. What
no event covers (argument handling, jaxpr simplification, executable setup) is
reported as ``unattributed`` rather than hidden. Garbage collection stays on: the
collections that tracing triggers are part of what a real first call costs.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jitscope.errors import CompileError, JitscopeError, UserCodeError
from jitscope.jaxcompat.caches import clear_in_memory_caches
from jitscope.jaxcompat.compile_hooks import UncompilableProgram, refusing_uncompilable
from jitscope.jaxcompat.jit import JitOptions, make_jit
from jitscope.jaxcompat.monitoring import watch_compilation
from jitscope.load.specs import ArgSet
from jitscope.model.bench import ColdRecord, ColdRun
from jitscope.timing.clock import Clock
from jitscope.timing.inputs import block_all
from jitscope.timing.stats import median, median_or_none


@dataclass
class ColdOutcome:
    """Live result of a cold call: the compiled wrapper and its outputs stay in bench code."""

    run: ColdRun
    jitted: Any
    out: Any
    profiler: Any | None = None


def user_code_failed(
    target: str, call: str, exc: BaseException, options: JitOptions, when: str, *,
    fn: Callable[..., Any] | None = None, argset: ArgSet | None = None,
) -> JitscopeError:
    """A clear error for the user's function failing: their frames only, and a fix where we know one.

    With the function and its argument specs, the fix names only the parameters that were given
    Python values (the ones worth making static), as ``jitscope trace`` does.
    A device out-of-memory error is not the function's fault: it is a ``DeviceMemoryError`` (exit 2).
    """
    from jitscope.jaxcompat.runtime_errors import device_memory_error
    from jitscope.tracing.diagnose import diagnose, settings_in_call

    if isinstance(exc, UncompilableProgram):  # refused before XLA could abort the process
        return CompileError(f"{target}({call}): {exc}",
                            hint="`jitscope trace` shows its jaxpr and StableHLO without compiling it")
    oom = device_memory_error(exc, f"running {target}({call}) {when}")
    if oom is not None:
        return oom
    settings = None
    if fn is not None and argset is not None:
        from jitscope.load.target import parameter_names

        settings = settings_in_call(parameter_names(fn), argset.args, argset.kwargs)
    diag = diagnose(exc, options, settings)
    detail = diag.traceback
    if not detail and diag.location is not None:
        detail = f"  {diag.location}, in {diag.location.function}\n    {diag.source_line.strip()}"
    return UserCodeError(
        f"{target}({call}) failed {when}: {diag.message}",
        hint=diag.fix if diag.kind != "user_error" else None,
        detail=detail or None,
    )


def measure_cold(
    fn: Callable[..., Any], options: JitOptions, args: Sequence[Any], kwargs: dict[str, Any], *,
    clock: Clock, profile: bool = False,
) -> ColdOutcome:
    """One cold call. Exceptions from the user's code propagate unchanged."""
    clear_in_memory_caches()
    jitted = make_jit(fn, options)
    profiler = None
    if profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0005, async_mode="disabled")
    gc.collect()
    with watch_compilation(clock) as watch, refusing_uncompilable():
        if profiler is not None:
            profiler.start()
        try:
            start = clock()
            out = jitted(*args, **kwargs)
            returned = clock()
            block_all(out)
            end = clock()
        finally:
            if profiler is not None:
                profiler.stop()
    total = end - start
    first_run = end - watch.compile_end if watch.compile_end is not None else None
    parts = [watch.phase("trace"), watch.phase("lower"), watch.phase("compile"), first_run]
    run = ColdRun(
        total=total,
        returned=returned - start,
        trace=parts[0],
        lower=parts[1],
        compile=parts[2],
        first_run=first_run,
        unattributed=total - sum(p for p in parts if p is not None),
        compiles=watch.counts.get("compile", 0),
        cache_hit=watch.cache_hit,
    )
    return ColdOutcome(run, jitted, out, profiler)


def prime_process() -> None:
    """One throwaway compile before any measurement.

    The first compile in a process also pays one-time start-up (MLIR context and dialects,
    lazy imports inside JAX) that clearing the caches cannot undo, so without this the first
    row would look slower than the rest for reasons that have nothing to do with it. The
    truly cold case, start-up included, is what ``--cold-process`` measures.
    """
    import jax
    import jax.numpy as jnp

    throwaway = jax.jit(lambda x: jnp.sin(x) * 2.0 + 1.0)  # jitscope: ignore[JS303] (compiled once, on purpose)
    block_all(throwaway(jnp.zeros((4,), jnp.float32)))


def median_run(runs: Sequence[ColdRun]) -> ColdRun:
    """Phase by phase median of several cold runs (so the phases need not add up to the total)."""
    hits = {r.cache_hit for r in runs}
    return ColdRun(
        total=median([r.total for r in runs]),
        returned=median([r.returned for r in runs]),
        trace=median_or_none([r.trace for r in runs]),
        lower=median_or_none([r.lower for r in runs]),
        compile=median_or_none([r.compile for r in runs]),
        first_run=median_or_none([r.first_run for r in runs]),
        unattributed=median_or_none([r.unattributed for r in runs]),
        compiles=max(r.compiles for r in runs),
        cache_hit=hits.pop() if len(hits) == 1 else None,
    )


def cold_record(runs: Sequence[ColdRun]) -> ColdRecord:
    return ColdRecord(runs=tuple(runs), median=median_run(runs))
