"""load -> inputs -> cold call -> cached calls -> analyses -> BenchReport.

``bench_calls`` benchmarks every (target, ArgSet) pair and returns records only, plus
the live pyinstrument profilers for ``--profile`` (which the CLI shows or saves, as
``jitscope trace`` does). Every step that runs the user's code turns a failure into a
``UserCodeError`` with their trimmed traceback; ``bench_calls`` records it as one of the
report's ``failures`` and goes on with the next call. A device out-of-memory error is not
the function's fault: it stops the run as one ``DeviceMemoryError`` line (exit 2).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from jitscope.errors import UserCodeError
from jitscope.jaxcompat import compile_profile
from jitscope.jaxcompat.caches import PersistentCacheState, persistent_cache
from jitscope.jaxcompat.wrappers import static_values
from jitscope.load.abstract import input_bytes
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, jit_options_for, parameter_names
from jitscope.model.bench import (
    BenchFailure,
    BenchReport,
    BenchRow,
    BenchSettings,
    CachedRecord,
    DerivedRecord,
    EagerRecord,
    TimingStats,
)
from jitscope.timing import inputs as inp
from jitscope.timing.calibrate import MAX_LOOPS
from jitscope.timing.called import timed_call
from jitscope.timing.clock import Clock, clock_name, clock_resolution, perf_clock
from jitscope.timing.cold import ColdOutcome, cold_record, measure_cold, prime_process, user_code_failed
from jitscope.timing.donated import Donated, cached_round, donated_arguments
from jitscope.timing.loops import (
    Measured,
    RoundTimer,
    blocked_round,
    dispatch_round,
    measure,
    paired_rounds,
    run_rounds,
)
from jitscope.timing.scaling import scaling_records
from jitscope.timing.stats import median, summarize
from jitscope.timing.steady import default_max_warmup, steady_note
from jitscope.units import fmt_duration

#: (completed steps, total steps, what is happening now)
Progress = Callable[[float, int, str], None]
#: The dispatch-only measurement gets this fraction of the budget.
DISPATCH_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class BenchOptions:
    budget: float = 0.5  # seconds of timed rounds per row (eager gets as much again)
    min_rounds: int = 5
    cold_runs: int = 1
    cold_process: bool = False
    eager: bool = False
    dispatch: bool = True
    profile: bool = False
    #: ``--compile-profile``: one more cold compile, profiled, for the compile-time section (``BenchRow.compile_time``);
    #: on a GPU XLA's phases come from the first measured cold call's compile (only it autotunes).
    compile_profile: bool = False
    seed: int = 0
    persistent_cache: str | None = None  # None: respect JAX's config; "off"; or a directory
    max_warmup: float | None = None  # warm-up cap while waiting for a steady state; None: default_max_warmup
    clock: Clock = perf_clock
    #: Processes of one jax.distributed program (``bench --processes``) must make the same calls, or one waits
    #: in a collective for good: each times exactly this many rounds of one call (after 6 warm-up calls), no
    #: clock deciding how many. None: rounds, loops and warm-up adapt to the budget.
    lockstep_rounds: int | None = None


@dataclass
class BenchResult:
    """The report, plus live profilers (label, pyinstrument.Profiler) for ``--profile``."""

    report: BenchReport
    profilers: list[tuple[str, Any]] = field(default_factory=list)
    #: Row key -> the capture around its first cold call's compile (``--compile-profile`` on a GPU).
    compile_captures: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Context:
    options: BenchOptions
    cache: PersistentCacheState
    resolution: float
    progress: Progress
    total: int
    max_warmup: float
    done: int = 0
    captures: dict[str, Any] = field(default_factory=dict)

    def step(self, fraction: float, text: str) -> None:
        self.progress(self.done + fraction, self.total, text)

    def measure(self, time_round: RoundTimer, max_loops: int = MAX_LOOPS) -> Measured:
        """Warm up, calibrate and time ``time_round`` with this run's budget, minimum rounds and clock."""
        opts = self.options
        if opts.lockstep_rounds is not None:  # fixed counts: zero budget and warm-up cap stop at their minimums
            return measure(time_round, budget=0.0, min_rounds=opts.lockstep_rounds, resolution=self.resolution,
                           clock=opts.clock, loops=1, max_warmup=0.0)
        return measure(time_round, budget=opts.budget, min_rounds=opts.min_rounds, resolution=self.resolution,
                       clock=opts.clock, max_loops=max_loops, max_warmup=self.max_warmup)


@contextlib.contextmanager
def device_errors(during: str) -> Iterator[None]:
    """Turn a device out-of-memory error raised outside the user's function into one DeviceMemoryError line."""
    from jitscope.jaxcompat.runtime_errors import device_memory_error

    try:
        yield
    except Exception as exc:
        oom = device_memory_error(exc, during)
        if oom is None:
            raise
        raise oom from None


def _no_progress(completed: float, total: int, text: str) -> None:
    return None


def _device_state() -> tuple[bool, int | None, int | None]:
    import jax

    from jitscope.jaxcompat.monitoring import device_memory

    mem = device_memory()
    return jax.default_backend() == "cpu", mem.free if mem else None, mem.peak_bytes_in_use if mem else None


def _statics(target: TargetHandle, argset: ArgSet) -> dict[str, str]:
    """Static name -> repr: the named statics, then the Python values the wrapper's rule makes static
    (equinox: ``lr: 0.01``), by their path."""
    named = {name: repr(argset.kwargs[name]) for name in argset.static_names if name in argset.kwargs}
    return named | {path: repr(leaf) for path, leaf in static_values(target.options, argset.args, argset.kwargs,
                                                                    parameter_names(target.fn))}


def harness_overhead(clock: Clock, resolution: float, budget: float) -> float:
    """Per-call cost of the timed loop itself: a call that returns an already-ready array."""
    import jax
    import numpy as np

    ready = jax.device_put(np.zeros((), np.float32)).block_until_ready()
    give = itertools.repeat(ready).__next__  # a call implemented in C, like a jitted function's fast path
    rounds = blocked_round(give, (), {}, inp.blocker_for(ready), clock)
    return measure(rounds, budget=budget, min_rounds=5, resolution=resolution, clock=clock,
                   max_warmup=budget).stats.median


def _cached(target: TargetHandle, argset: ArgSet, cold: ColdOutcome, args: tuple[Any, ...],
            kwargs: dict[str, Any], ctx: _Context) -> tuple[CachedRecord, list[str]]:
    opts, clock, notes = ctx.options, ctx.options.clock, []
    donated = donated_arguments(target, args, kwargs)
    dispatch: TimingStats | None = None
    compiled: TimingStats | None = None
    overhead: float | None = None
    try:
        # the user's own call: a library wrapper (equinox, nnx) with its per-call Python, else jitscope's jit
        timed = timed_call(target, cold.jitted, cold.out, *donated.fresh(args, kwargs))
        notes += [timed.note] if timed.note else []
        rounds, max_loops = cached_round(timed.fn, args, kwargs, donated, timed.block, clock)
        measured = ctx.measure(rounds, max_loops=max_loops)
        if donated:
            notes.append("donated arguments: every call got fresh copies, made outside the timed region; "
                         "dispatch-only time not measured")
        elif opts.dispatch:
            ctx.step(0.7, f"{target.name}: dispatch-only calls")
            dispatch = _side_rounds(dispatch_round(timed.fn, args, kwargs, timed.block, clock), measured, ctx)
        if timed.called:  # the compiled program alone: the wrapper's own work is the difference
            ctx.step(0.75, f"{target.name}: the compiled program alone")
            program, _ = cached_round(cold.jitted, args, kwargs, donated, inp.blocker_for(cold.out), clock)
            compiled, overhead = _program_alone(rounds, program, measured, ctx)
    except Exception as exc:  # noqa: BLE001 - the user's compiled function failed when run again
        raise user_code_failed(target.name, argset.describe(), exc, target.options, "on a cached call",
                               fn=target.fn, argset=argset) from None
    stats = measured.stats
    if opts.lockstep_rounds is None:  # in lockstep the warm-up is a fixed 6 calls, not a wait for a steady state
        notes += [n for n in [steady_note("cached calls", measured.steady)] if n]
    if stats.unreliable:
        notes.append(f"cached-call times are unreliable: the slowest round took {stats.max / stats.min:.1f}x "
                     "the fastest (max >= 4 x min); close other programs or raise --budget"
                     if stats.min > 0 else "cached-call times are unreliable: the clock did not move")
    record = CachedRecord(
        blocked=stats,
        dispatch=dispatch,
        warmup_calls=measured.warmup_calls,
        output_leaves=inp.count_array_leaves(cold.out),
        fresh_inputs=bool(donated),
        steady_state=measured.steady,
        called=timed.called,
        compiled=compiled,
        wrapper_overhead=overhead,
    )
    return record, notes


def _program_alone(wrapper: RoundTimer, program: RoundTimer, measured: Measured, ctx: _Context
                   ) -> tuple[TimingStats, float]:
    """The compiled program alone, and the wrapper's own per-call work: rounds of the wrapper's call and of
    the program alternate (a share of the budget, or the lockstep's fixed rounds), so both see the same
    load; the work is the median of the pairs' differences."""
    opts = ctx.options
    lockstep = opts.lockstep_rounds
    loops = measured.stats.loops
    program(1), program(1)  # its first calls since the cold call pay one-off costs
    ones, twos, spent = paired_rounds(wrapper, program, loops, min_rounds=lockstep or opts.min_rounds,
                                      budget=0.0 if lockstep else opts.budget * DISPATCH_SHARE, clock=opts.clock)
    return summarize(twos, loops, total_seconds=spent), median([a - b for a, b in zip(ones, twos, strict=True)])


def _side_rounds(time_round: RoundTimer, measured: Measured, ctx: _Context) -> TimingStats:
    """A second figure of the same calls (dispatch-only, the compiled program alone): the main measurement's
    loops, a share of the budget (or the lockstep's fixed rounds)."""
    opts = ctx.options
    lockstep = opts.lockstep_rounds
    samples, spent = run_rounds(time_round, measured.stats.loops, budget=0.0 if lockstep else opts.budget * DISPATCH_SHARE,
                                min_rounds=lockstep or opts.min_rounds, clock=opts.clock)
    return summarize(samples, measured.stats.loops, total_seconds=spent)


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """One call ready to run: the target with the call's static names, concrete inputs, what it donates."""

    target: TargetHandle
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    donated: Donated
    notes: tuple[str, ...] = ()


def prepare_call(target: TargetHandle, argset: ArgSet, seed: int) -> PreparedCall:
    """Check that the inputs fit, make them, and mark the call's static arguments (bench and profile)."""
    from jitscope.load.abstract import warn_if_x64_disabled

    on_cpu, device_free, _ = _device_state()
    inp.check_fits(argset, host_available=inp.host_available_bytes(), device_free=device_free, on_cpu=on_cpu,
                   what=f"{target.name}({argset.describe()})")
    notes = tuple(w for w in [warn_if_x64_disabled(argset)] if w)
    args, kwargs = inp.make_inputs(argset, seed)
    target = dataclasses.replace(target, options=jit_options_for(target, argset)[0])
    return PreparedCall(target, args, kwargs, donated_arguments(target, args, kwargs), notes)


def _eager(target: TargetHandle, args: tuple[Any, ...], kwargs: dict[str, Any], jit_median: float,
           ctx: _Context) -> EagerRecord:
    try:
        first = target.fn(*args, **kwargs)
        block = inp.blocker_for(first)
        block(first)
        measured = ctx.measure(blocked_round(target.fn, args, kwargs, block, ctx.options.clock))
    except Exception as exc:  # noqa: BLE001 - functions that only work under jit are common
        return EagerRecord(stats=None, speedup=None, error=f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                           if str(exc) else type(exc).__name__)
    speedup = measured.stats.median / jit_median if jit_median > 0 else None
    return EagerRecord(stats=measured.stats, speedup=speedup, steady_state=measured.steady)


def _analyses(cold: ColdOutcome, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, list[str]]:
    from jitscope.jaxcompat.stages import cost_record, memory_record

    try:
        compiled = cold.jitted.lower(*args, **kwargs).compile()
    except Exception as exc:  # noqa: BLE001 - analyses are extras; the timings stand without them
        return None, None, [f"no cost/memory analysis: {type(exc).__name__}: {exc}"]
    return cost_record(compiled), memory_record(compiled), []


def derive(cold_total: float, cached: float, eager: EagerRecord | None, cost: Any) -> DerivedRecord:
    """Figures computed from the measurements (pure)."""
    overhead = cold_total - cached
    breakeven = None
    if eager is not None and eager.stats is not None and eager.stats.median > cached:
        breakeven = overhead / (eager.stats.median - cached)
    flops = getattr(cost, "flops", None)
    accessed = getattr(cost, "bytes_accessed", None)
    return DerivedRecord(
        cold_in_calls=overhead / cached if cached > 0 else None,
        breakeven_calls=breakeven,
        flops_per_second=flops / cached if flops and cached > 0 else None,
        bytes_per_second=accessed / cached if accessed and cached > 0 else None,
    )


def bench_row(target: TargetHandle, argset: ArgSet, ctx: _Context) -> tuple[BenchRow, Any | None]:
    """Benchmark one call of one target."""
    opts = ctx.options
    name, call = target.name, argset.describe()
    ctx.step(0.0, f"{name}: making inputs")
    prepared = prepare_call(target, argset, opts.seed)
    target, args, kwargs, donated = prepared.target, prepared.args, prepared.kwargs, prepared.donated
    options = target.options
    notes = list(prepared.notes)
    outcomes: list[ColdOutcome] = []
    capture = _first_compile_capture(opts)
    for i in range(opts.cold_runs):
        ctx.step(0.1 + 0.2 * i / opts.cold_runs, f"{name}: cold call {i + 1}/{opts.cold_runs}")
        try:
            with compile_profile.capture_compile(capture) if capture is not None and i == 0 else contextlib.nullcontext():
                outcomes.append(measure_cold(target.fn, options, *donated.fresh(args, kwargs), clock=opts.clock))
        except Exception as exc:  # noqa: BLE001 - the user's function failed on its first call
            raise user_code_failed(name, call, exc, options, "on its first call", fn=target.fn,
                                   argset=argset) from None
    cold = cold_record([o.run for o in outcomes])
    if capture is not None:  # the compile's own length and the persistent cache's answer, as measured
        first = outcomes[0].run
        capture.seconds = first.compile
        capture.persistent_cache = "" if first.cache_hit is None else "hit" if first.cache_hit else "miss"
    profiler = None
    if opts.profile:  # an extra cold call: the profiler's overhead must not touch the measured ones
        ctx.step(0.3, f"{name}: profiling a cold call")
        profiler = measure_cold(target.fn, options, *donated.fresh(args, kwargs), clock=opts.clock,
                                profile=True).profiler
    ctx.step(0.35, f"{name}: cached calls")
    cached, cached_notes = _cached(target, argset, outcomes[-1], args, kwargs, ctx)
    notes += cached_notes
    eager = None
    if opts.eager:
        ctx.step(0.8, f"{name}: eager calls")
        eager = _eager(target, args, kwargs, cached.blocked.median, ctx)
        if eager.error:
            notes.append(f"--eager: the un-jitted function failed: {eager.error}")
        notes += [n for n in [steady_note("--eager calls", eager.steady_state)] if n]
    cost, memory, analysis_notes = _analyses(outcomes[-1], args, kwargs)
    notes += analysis_notes
    process = None
    if opts.cold_process:
        import jax

        from jitscope.timing.process import measure_process

        ctx.step(0.9, f"{name}: cold process")
        process = measure_process(_reloadable(target), argset, seed=opts.seed, cache=ctx.cache.label,
                                  x64=bool(jax.config.read("jax_enable_x64")), runs=opts.cold_runs,
                                  examples=target.examples)
    notes += _cold_notes(cold.median.compiles, cold.median.cache_hit, ctx.cache)
    notes += _autotuned_once([o.run.compile for o in outcomes])
    _, _, peak = _device_state()
    row = BenchRow(
        target=name, call=call, label=argset.label, statics=_statics(target, argset), input_bytes=input_bytes(argset),
        cold=cold, cached=cached, process=process, eager=eager, cost=cost, memory=memory, device_peak_bytes=peak,
        derived=derive(cold.median.total, cached.blocked.median, eager, cost), warnings=tuple(notes),
    )
    if capture is not None:
        ctx.captures[row.key] = capture
    return row, profiler


def _first_compile_capture(opts: BenchOptions) -> Any | None:
    """``--compile-profile`` on a GPU profiles the first measured cold call's compile itself: XLA keeps its
    autotuning results for the process, so a later compile of the same program would not autotune, and
    autotuning is often most of a GPU compile. Elsewhere an extra compile is profiled, after the measured ones
    (the capture costs a small compile 10-40%)."""
    if not opts.compile_profile:
        return None
    from jitscope.jaxcompat.profiler import device_description

    if device_description()[0] != "gpu":
        return None
    return compile_profile.CompileCapture()


def _reloadable(target: TargetHandle) -> str:
    """The target as a new process in the current directory can load it: files by absolute path."""
    from pathlib import Path

    head = target.name[: -len(target.attr_path) - 1]
    module_file = getattr(target.module, "__file__", None)
    if module_file and (head.endswith(".py") or "/" in head):
        return f"{Path(module_file).resolve()}:{target.attr_path}"
    return target.name


#: A first cold compile this much longer than the later ones is said to have autotuned alone (GPU).
AUTOTUNED_ONCE = 1.5


def _autotuned_once(compiles: list[float | None]) -> list[str]:
    """On a GPU, XLA keeps its autotuning results for the process (``jax.clear_caches`` leaves them): only the
    first of several cold calls autotunes. Seen on an H100: 11.8 s, then 2.9 s and 2.9 s."""
    import statistics

    from jitscope.jaxcompat.profiler import device_description

    times = [c for c in compiles if c is not None]
    if len(times) < 2 or device_description()[0] != "gpu":
        return []
    later = statistics.median(times[1:])
    if times[0] <= AUTOTUNED_ONCE * later:
        return []
    return [f"cold calls: the first compile took {fmt_duration(times[0])}, the later ones {fmt_duration(later)}: "
            "XLA keeps its GPU autotuning results for the process, so only the first autotuned (their median mixes "
            "the two); --cold-process measures each cold call in a new process"]


def _cold_notes(compiles: int, cache_hit: bool | None, cache: PersistentCacheState) -> list[str]:
    notes = []
    if compiles > 1:
        notes.append(f"the first call compiled {compiles} programs (eager operations ran while tracing); "
                     "trace/lower/compile are their sums")
    if cache_hit:
        notes.append("the compile was served by the persistent compilation cache: 'compile' is a disk read")
    elif cache_hit is False and cache.min_compile_seconds:
        notes.append(f"persistent cache miss; JAX only writes entries for compiles over "
                     f"{cache.min_compile_seconds:g} s (jax_persistent_cache_min_compile_time_secs)")
    return notes


def bench_calls(calls: Sequence[tuple[TargetHandle, ArgSet]], options: BenchOptions | None = None,
                progress: Progress | None = None) -> BenchResult:
    """Benchmark every call; the persistent cache is set up for the run and restored afterwards."""
    from jitscope.jaxcompat.stages import environment

    options = options or BenchOptions()
    resolution = clock_resolution(options.clock)
    rows: list[BenchRow] = []
    profilers: list[tuple[str, Any]] = []
    failures: list[BenchFailure] = []
    on_cpu, _, _ = _device_state()
    max_warmup = options.max_warmup if options.max_warmup is not None else default_max_warmup(options.budget, on_cpu)
    with persistent_cache(options.persistent_cache) as cache:
        ctx = _Context(options, cache, resolution, progress or _no_progress, len(calls), max_warmup)
        with device_errors("preparing the benchmark"):
            prime_process()
            overhead = harness_overhead(options.clock, resolution, min(0.05, options.budget / 5))
        for target, argset in calls:
            try:
                with device_errors(f"benchmarking {target.name}({argset.describe()})"):
                    row, profiler = bench_row(target, argset, ctx)
            except UserCodeError as err:  # record it and go on: one broken function must not hide the rest
                failures.append(BenchFailure(target=target.name, call=argset.describe(), label=argset.label,
                                             error=err.message, hint=err.hint, detail=err.detail))
            else:
                rows.append(row)
                if profiler is not None:
                    profilers.append((f"{row.target}({row.call})", profiler))
            ctx.done += 1
            ctx.step(0.0, "done")
    settings = BenchSettings(
        budget=options.budget, min_rounds=options.min_rounds, cold_runs=options.cold_runs,
        cold_process=options.cold_process, eager=options.eager, seed=options.seed,
        persistent_cache=cache.label, persistent_cache_source=cache.source, clock=clock_name(options.clock),
        clock_resolution=resolution, harness_overhead=overhead, max_warmup=max_warmup,
        lockstep_rounds=options.lockstep_rounds,
    )
    report = BenchReport(rows=tuple(rows), settings=settings, environment=environment(),
                         scaling=scaling_records(rows), failures=tuple(failures))
    return BenchResult(report, profilers, ctx.captures)
