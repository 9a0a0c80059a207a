"""``jitscope trace`` and ``jitscope.trace``: load -> trace -> lower -> compile, every call of every target.

``trace(fn, *args)`` is the Python entry; ``run_trace`` the whole command minus option parsing and
output (the CLI's ``jitscope trace`` calls it with target strings, the Python API with a loaded
function). Records only come back (plus pyinstrument profilers when asked): writing them is the
output layer's job (``report/``; the ``--out DIR`` stage files are ``report/writers/stage_files.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from jitscope.api.targets import shape_list, target_of
from jitscope.jaxcompat.caches import forget_other_functions_lines
from jitscope.load.calls import calls_from_flags, load_all
from jitscope.load.mesh import example_mesh_scope
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, check_call
from jitscope.model.trace import SourceLineRecord, TraceRecord, TraceReport
from jitscope.profiling.line_costs import line_costs
from jitscope.sharding.analyse import ShardingProbe
from jitscope.tracing.compile import CompileSkipped, lower_and_compile
from jitscope.tracing.lines import source_lines
from jitscope.tracing.recompile import cache_hits
from jitscope.tracing.session import TraceHandle, trace_target

if TYPE_CHECKING:
    from jitscope.api.results import TraceResult

#: ``trace(stages=...)``: every stage, in the order jit makes them, and XLA's two analyses.
STAGES = ("jaxpr", "stablehlo", "hlo", "cost", "memory")  # model.trace.STAGES (not imported: no import cost)


def trace(
    fn: Callable[..., Any], /, *args: Any,
    stages: Sequence[str] | str = STAGES,
    effects: bool = True,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    shapes: str | Sequence[str] | None = None,
    locations: str = "full",
    depth: int | None = None,
    fold: bool | None = None,
    **kwargs: Any,
) -> TraceResult:
    """Trace ``fn(*args, **kwargs)`` as jit does, then lower and compile it: every stage, nothing run.

    Arrays in the arguments stand for their abstract values (shape, dtype, weak type, sharding);
    nothing is allocated on the device. ``shapes="f32[8,128], i32[]"`` (or a list: one call each)
    describes the arguments instead, as ``--shapes``. A failure in your code is in the result
    (``result.calls[0].diagnostic``), explained, not raised.

    >>> report = jitscope.trace(train_step, model, optimizer, batch)
    >>> print(report.calls[0].jaxpr_text)
    """
    from jitscope.api.results import TraceResult

    wanted = _stages(stages)
    if locations not in ("full", "user", "none"):
        from jitscope.errors import UsageError

        raise UsageError(f"locations={locations!r} is not one of full, user, none")
    handle = target_of(fn, args, kwargs, static_argnums, static_argnames, abstract=True, shapes=shapes)
    report, _ = run_trace([handle], shape_list(shapes), None, None, wanted, effects, False)
    return TraceResult(report, stages=wanted, locations=locations, depth=depth, fold=fold)


def run_trace(
    targets: Sequence[str | TargetHandle],
    shapes: Sequence[str] | None,
    statics: list[str] | None,
    kwargs: list[str] | None,
    stages: Sequence[str],
    watch_effects: bool = True,
    profile: bool = False,
    progress: Callable[[float, int, str], None] | None = None,
) -> tuple[TraceReport, list[tuple[str, Any]]]:
    """Trace (and lower/compile as ``stages`` need) every call of every target.

    ``shapes`` holds one spec per call (a call sequence); ``progress(done, total, text)`` is
    told before each call, so a CLI can show a bar.
    """
    from jitscope.jaxcompat import features
    from jitscope.jaxcompat.stages import environment

    features.check_supported()  # one clear line on a JAX without what tracing needs
    handles = load_all(list(targets))
    records: list[TraceRecord] = []
    profilers: list[tuple[str, Any]] = []
    plan: list[tuple[TargetHandle, ArgSet, int, int]] = []
    for target in handles:
        calls = calls_from_flags(target, list(shapes) if shapes else None, statics, kwargs)
        for argset in calls:
            check_call(target, argset)
        hits = cache_hits(target, calls)
        plan += [(target, argset, i, hit) for i, (argset, hit) in enumerate(zip(calls, hits, strict=True), 1)]
    with example_mesh_scope(argset for _, argset, _, _ in plan):  # the examples' mesh, when --mesh is not given
        for done, (target, argset, index, hit) in enumerate(plan):
            if progress is not None:
                progress(done, len(plan), f"tracing {target.attr_path}({argset.describe()[:40]})")
            forget_other_functions_lines(target.name)
            handle = trace_target(target, argset, watch_effects=watch_effects, profile=profile,
                                  want_jaxpr="jaxpr" in stages)
            # A cache hit needs the earlier call to have traced: a failed trace caches nothing.
            earlier = records[len(records) - (index - hit)] if hit else None
            hit_of = hit if earlier is not None and earlier.diagnostic is None else None
            record = dataclasses.replace(handle.record, call_index=index, cache_hit_of=hit_of)
            if handle.traced is not None:
                probe = ShardingProbe(argset, tuple(a.path for a in record.seen if a.kind == "traced"))
                compiled: list[Any] = []

                def on_compiled(lowered: Any, executable: Any, probe: ShardingProbe = probe,
                                compiled: list[Any] = compiled) -> None:
                    probe(lowered, executable)
                    compiled.append(executable)

                try:
                    record = dataclasses.replace(record, stages=lower_and_compile(handle.traced, stages, on_compiled))
                except CompileSkipped as skipped:
                    record = dataclasses.replace(record, stages=skipped.partial,
                                                 warnings=(*record.warnings, skipped.reason))
                record = dataclasses.replace(record, sharding=probe.record,
                                             source_lines=_source_lines(handle, record, compiled))
            records.append(record)
            if handle.profiler is not None:
                profilers.append((f"{record.target}({record.call})", handle.profiler))
    return TraceReport(traces=tuple(records), environment=environment()), profilers


def _source_lines(handle: TraceHandle, record: TraceRecord, compiled: list[Any]) -> tuple[SourceLineRecord, ...]:
    """The jaxpr by line of the user's code, with XLA's FLOPs and bytes split over the lines when compiled."""
    if record.jaxpr is None:
        return ()
    costs = None
    if compiled and handle.project is not None:
        from jitscope.jaxcompat.stages import cost_record

        text = _module_text(compiled[0])
        cost = record.stages.cost if record.stages is not None and record.stages.cost else cost_record(compiled[0])
        if text:
            costs = line_costs(text, record.jaxpr, handle.project.is_user_file, cost.flops if cost else None,
                               cost.bytes_accessed if cost else None)
    return source_lines(record.jaxpr, costs)


def _module_text(compiled: Any) -> str | None:
    """The optimised HLO with its source stacks (the stack-frame tables ``StagesRecord.hlo`` leaves out)."""
    try:
        text = compiled.as_text()
    except Exception:  # noqa: BLE001 - a backend without HLO text: no costs per line
        return None
    return str(text) if text else None


def _stages(stages: Sequence[str] | str) -> tuple[str, ...]:
    from jitscope.errors import UsageError

    wanted = tuple(s.strip() for s in (stages.split(",") if isinstance(stages, str) else stages) if s.strip())
    unknown = [s for s in wanted if s not in STAGES]
    if unknown or not wanted:
        raise UsageError(f"unknown stage {unknown[0]!r}" if unknown else "no stage asked for",
                         hint=f"stages are {', '.join(STAGES)}")
    return tuple(s for s in STAGES if s in wanted)
