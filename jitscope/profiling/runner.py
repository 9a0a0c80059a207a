"""load -> inputs -> first call -> cached calls timed as bench does -> calls under the profiler -> ProfileReport.

The calls, inputs and cached-call timing are bench's own (``bench.plan``, ``bench.runner``
``prepare_call``/``cached_round``, ``bench.loops.measure``), so ``profile`` and ``bench`` measure
the same call. The cached calls are timed first with no profiler running: that median is what
the profile's parts are reconciled against. Then ``calls`` more run under ``jax.profiler.trace``
(donated arguments get fresh copies made before the capture starts).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from jitscope.errors import CompileError, UserCodeError
from jitscope.jaxcompat import profiler as jp
from jitscope.jaxcompat.compile_hooks import refusing_uncompilable
from jitscope.jaxcompat.jit import make_jit
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle
from jitscope.model.bench import BenchFailure
from jitscope.model.common import Location
from jitscope.model.profile import ProfileReport, ProfileRow, ProfileSettings, Reconciliation
from jitscope.profiling.attribute import Attribution, FunctionSpan, attribute
from jitscope.profiling.callsites import call_chains
from jitscope.profiling.events import DeviceTimes, device_times
from jitscope.profiling.graphs import Resolved, resolve_graph_kernels
from jitscope.profiling.hlo import parse_module
from jitscope.profiling.peaks import peak_for
from jitscope.timing import inputs as inp
from jitscope.timing.clock import Clock, clock_resolution, perf_clock
from jitscope.timing.cold import user_code_failed
from jitscope.timing.donated import cached_round
from jitscope.timing.loops import measure
from jitscope.timing.runner import PreparedCall, device_errors, prepare_call
from jitscope.timing.steady import default_max_warmup
from jitscope.units import fmt_duration, plural
from jitscope.userframes import is_user_file

Progress = Callable[[float, int, str], None]
#: The parts of a call must add up to the measured time within this fraction.
TOLERANCE = 0.10


@dataclass(frozen=True, slots=True)
class ProfileOptions:
    calls: int = 20  # calls captured under the profiler
    budget: float = 0.3  # seconds of cached-call rounds timed without the profiler
    seed: int = 0
    trace_out: str | None = None  # keep the raw capture here
    clock: Clock = perf_clock
    #: ``profile --processes``: the processes of one jax.distributed program must make the same calls, or one
    #: waits in a collective for good; each times exactly this many rounds of one call (after the warm-up
    #: calls), no clock deciding how many (as ``BenchOptions.lockstep_rounds``). None: as the budget allows.
    lockstep_rounds: int | None = None


def function_span(fn: Any) -> FunctionSpan:
    """The file and line range of ``fn``'s source (its decorators and def line included)."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return FunctionSpan("", 0, -1)
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return FunctionSpan(code.co_filename, code.co_firstlineno, code.co_firstlineno, code.co_name)
    return FunctionSpan(code.co_filename, first, first + len(lines) - 1, code.co_name)


@contextlib.contextmanager
def _capture_dir(keep: str | None) -> Iterator[str]:
    if keep is not None:
        yield keep
        return
    from jitscope.outputs import scratch_folder

    with scratch_folder("jitscope-profile-") as directory:
        yield str(directory)


def reconcile(times: DeviceTimes, attribution: Attribution, measured: float, wall: float,
              calls: int) -> Reconciliation:
    """The call's parts against the time measured without the profiler (pure)."""
    lines = sum(line.seconds for line in attribution.lines)
    busy, span = times.busy / calls, times.span / calls
    idle = max(span - busy, 0.0)
    copies = times.copies / calls
    host = max(measured - span - copies, 0.0)
    total = lines + attribution.no_source + idle + copies + host
    difference = (total - measured) / measured if measured > 0 else 0.0
    return Reconciliation(measured=measured, profiled_wall=wall, lines=lines, no_source=attribution.no_source,
                          idle=idle, copies=copies, host=host, total=total, difference=difference,
                          reconciles=abs(difference) <= TOLERANCE, tolerance=TOLERANCE,
                          concurrency=times.op_seconds / times.busy if times.busy > 0 else 1.0)


def _notes(times: DeviceTimes, rec: Reconciliation, calls: int, module: str) -> list[str]:
    notes = []
    if not times.ops:
        notes.append(f"the capture held no events of the compiled module {module}: nothing to attribute "
                     "(the program may have run on another device, or the profiler missed it)")
    elif rec.lines == 0:
        notes.append(f"no device time was attributed to a source line: all of it ({fmt_duration(rec.no_source)} per "
                     f"call) is in ops with no source location (copies and layout changes XLA adds)")
    elif times.executions not in (calls, 1):
        notes.append(f"the capture held {times.executions} executions of {module}, not the {calls} profiled "
                     "calls: times per call may be off")
    if rec.measured > 0 and abs(rec.profiled_wall - rec.measured) > rec.tolerance * rec.measured:
        notes.append(f"calls under the profiler took {rec.profiled_wall / rec.measured:.2f}x the time of "
                     "calls without it")
    if rec.concurrency > 1.01:
        notes.append(f"thunks ran on several threads at once ({rec.concurrency:.2f}x the busy time): each "
                     "op's time is scaled down so that they add up to the time the device was busy")
    return notes


def _graph_notes(graphs: Resolved) -> list[str]:
    """What was done about kernels that ran inside CUDA graphs (XLA command buffers)."""
    if not graphs.graphs:
        return []
    placed = graphs.by_name + graphs.by_order
    note = (f"{plural(placed + graphs.unresolved, 'kernel')} ran inside CUDA graphs (XLA's command buffers "
            f"{', '.join(graphs.graphs)}): {graphs.by_name} placed by kernel name, {graphs.by_order} library "
            "kernels by the schedule's order")
    if graphs.unresolved:
        note += (f"; {graphs.unresolved} left on the graph, without a source line (XLA_FLAGS="
                 "--xla_gpu_enable_command_buffer= turns the graphs off, at some cost in launch time)")
    return [note]


def _run(prepared: PreparedCall, argset: ArgSet) -> tuple[Any, Any, Any]:
    """(jitted, its outputs, compiled) after the first call."""
    target = prepared.target
    jitted = make_jit(target.fn, target.options)
    try:
        args, kwargs = prepared.donated.fresh(prepared.args, prepared.kwargs)
        with refusing_uncompilable():
            out = jitted(*args, **kwargs)
        inp.block_all(out)
    except Exception as exc:  # noqa: BLE001 - the user's function failed on its first call
        raise user_code_failed(target.name, argset.describe(), exc, target.options, "on its first call",
                               fn=target.fn, argset=argset) from None
    try:
        compiled = jitted.lower(*prepared.args, **prepared.kwargs).compile()
    except Exception as exc:  # noqa: BLE001
        raise CompileError(f"{target.name}({argset.describe()}): compiling again for its HLO failed: "
                           f"{type(exc).__name__}: {exc}") from None
    return jitted, out, compiled


def profile_row(target: TargetHandle, argset: ArgSet, options: ProfileOptions,
                progress: Progress | None = None, step: float = 0.0, total: int = 1) -> ProfileRow:
    """Profile one call of one target."""
    say = progress or (lambda done, of, text: None)
    name, call = target.name, argset.describe()
    say(step, total, f"{name}: making inputs")
    prepared = prepare_call(target, argset, options.seed)
    say(step + 0.1, total, f"{name}: first call")
    jitted, out, compiled = _run(prepared, argset)
    module = parse_module(jp.compiled_module_text(compiled))
    block = inp.blocker_for(out)
    clock, calls = options.clock, max(1, options.calls)
    backend, kind = jp.device_description()
    args, kwargs, donated = prepared.args, prepared.kwargs, prepared.donated
    try:
        say(step + 0.2, total, f"{name}: cached calls (no profiler)")
        rounds, max_loops = cached_round(jitted, args, kwargs, donated, block, clock)
        if options.lockstep_rounds is not None:  # fixed counts: zero budget and warm-up cap stop at their minimums
            measured = measure(rounds, budget=0.0, min_rounds=options.lockstep_rounds,
                               resolution=clock_resolution(clock), clock=clock, loops=1, max_warmup=0.0)
        else:
            measured = measure(rounds, budget=options.budget, min_rounds=5, resolution=clock_resolution(clock),
                               clock=clock, max_loops=max_loops,
                               max_warmup=default_max_warmup(options.budget, backend == "cpu"))
        say(step + 0.6, total, f"{name}: {calls} calls under the profiler")
        fresh = [donated.fresh(args, kwargs) for _ in range(calls)]
        with _capture_dir(options.trace_out) as directory:
            with jp.capture(directory, perfetto=options.trace_out is not None):
                start = clock()
                for a, k in fresh:
                    block(jitted(*a, **k))
                wall = (clock() - start) / calls
            files = jp.xspace_files(directory)
            events = jp.read_events(files[-1]) if files else []
    except (UserCodeError, jp.CaptureReadError):  # not the user's code failing
        raise
    except Exception as exc:  # noqa: BLE001 - the user's compiled function failed when run again
        raise user_code_failed(name, call, exc, prepared.target.options, "on a cached call", fn=target.fn,
                               argset=argset) from None
    say(step + 0.9, total, f"{name}: attributing")
    graphs = resolve_graph_kernels(events, module, calls)
    times = device_times(graphs.events, module.name, calls)
    span = function_span(target.fn)
    peak = peak_for(kind)
    attribution = attribute(times, module, span, calls, is_user_file, call_chains(target.fn, is_user_file),
                            peak)
    rec = reconcile(times, attribution, measured.stats.median, wall, calls)
    where = ("GPU kernels" if backend in ("gpu", "cuda", "rocm") else f"{backend.upper()} ops") if times.on_device \
        else "CPU thunks"
    return ProfileRow(
        target=name, call=call, label=argset.label,
        statics={k: repr(argset.kwargs[k]) for k in argset.static_names if k in argset.kwargs},
        function=Location(span.file, span.first, span.name),
        last_line=span.last, module=module.name, events_from=where, calls=calls, lines=attribution.lines,
        ops=attribution.ops, reconciliation=rec, cached=measured.stats,
        warnings=(*prepared.notes, *_notes(times, rec, calls, module.name), *_graph_notes(graphs)), device_kind=kind,
        peak=peak,
    )


def profile_calls(calls: Sequence[tuple[TargetHandle, ArgSet]], options: ProfileOptions | None = None,
                  progress: Progress | None = None) -> ProfileReport:
    """Profile every call; a call whose code fails is recorded as a failure and the rest go on."""
    from jitscope.jaxcompat.stages import environment

    options = options or ProfileOptions()
    jp.check_supported()  # an unsupported JAX fails here, before anything runs
    rows: list[ProfileRow] = []
    failures: list[BenchFailure] = []
    for i, (target, argset) in enumerate(calls):
        try:
            with device_errors(f"profiling {target.name}({argset.describe()})"):
                rows.append(profile_row(target, argset, options, progress, float(i), len(calls)))
        except UserCodeError as err:
            failures.append(BenchFailure(target=target.name, call=argset.describe(), label=argset.label,
                                         error=err.message, hint=err.hint, detail=err.detail))
    settings = ProfileSettings(calls=options.calls, budget=options.budget, seed=options.seed,
                               trace_out=options.trace_out, lockstep_rounds=options.lockstep_rounds)
    return ProfileReport(rows=tuple(rows), settings=settings, environment=environment(), failures=tuple(failures))
