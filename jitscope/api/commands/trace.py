"""``jitscope trace`` and ``jitscope.trace``: load -> trace -> lower -> compile, every call of every target.

Read top to bottom: ``trace(fn, *args)`` is the Python entry; ``trace_command`` is the command line's
(``cli/trace.py`` parses the options and calls it); both stand on ``run_trace``, which traces (and
lowers and compiles as the stages need) every call of every target and returns records only.
Writing them is the output layer's job (``report/``; the ``--out DIR`` stage files are
``report/writers/stage_files.py``).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jitscope.api.targets import TargetFlags, shape_list, target_of
from jitscope.errors import CompileError, TraceError
from jitscope.jaxcompat.caches import forget_other_functions_lines
from jitscope.jaxcompat.compile_profile import CompileCapture
from jitscope.load.calls import calls_from_flags, load_all
from jitscope.load.mesh import example_mesh_scope
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, check_call
from jitscope.model.trace import LibraryCall, TraceRecord, TraceReport
from jitscope.profiling.compile_record import (
    compile_time_of,
    module_text,
    source_lines_of,
    static_variants_noted,
)
from jitscope.sharding.analyse import ShardingProbe
from jitscope.tracing.compile import CompileSkipped, lower_and_compile
from jitscope.tracing.recompile import cache_hits
from jitscope.tracing.session import TraceHandle, trace_target

if TYPE_CHECKING:
    from jitscope.api.results import TraceResult
    from jitscope.hosts.distributed import Job
    from jitscope.report.views.jaxpr_layout import LocationsMode

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
    compile_profile: bool = False,
    **kwargs: Any,
) -> TraceResult:
    """Trace ``fn(*args, **kwargs)`` as jit does, then lower and compile it: every stage, nothing run.

    Arrays in the arguments stand for their abstract values (shape, dtype, weak type, sharding);
    nothing is allocated on the device. ``shapes="f32[8,128], i32[]"`` (or a list: one call each)
    describes the arguments instead, as ``--shapes``. A failure in your code is in the result
    (``result.calls[0].diagnostic``), explained, not raised. ``compile_profile``: as ``--compile-profile``,
    the compile timed by XLA phase and by line (``result.record.traces[0].compile_time``).

    >>> report = jitscope.trace(train_step, model, optimizer, batch)
    >>> print(report.calls[0].jaxpr_text)
    """
    from jitscope.api.checks import check_choice, check_count, check_flag
    from jitscope.api.results import TraceResult
    from jitscope.report.views.jaxpr_layout import LOCATIONS

    wanted = parse_stages(stages, "stages")
    check_flag("effects", effects)
    check_choice("locations", locations, LOCATIONS, none_ok=False)
    check_count("depth", depth, least=0)
    if fold is not None:
        check_flag("fold", fold)
    handle = target_of(fn, args, kwargs, static_argnums, static_argnames, abstract=True, shapes=shapes)
    report, _ = run_trace([handle], shape_list(shapes), None, None, wanted, effects, False,
                          compile_profile=compile_profile)
    return TraceResult(report, stages=wanted, locations=locations, depth=depth, fold=fold)


def trace_command(flags: TargetFlags, *, stages: str, fmt: str | None, out: Path | None, effects: bool,
                  profile: bool, profile_html: Path | None, locations: LocationsMode, depth: int | None,
                  fold: bool | None, distributed: bool = False, save: Path | None = None,
                  compile_profile: bool = False) -> None:
    """``jitscope trace``: the report on stdout or in ``out`` (a report file, or a folder of stage files);
    a ``TraceError`` (exit 1) after it when the user's code failed in any call. ``distributed``: one process of
    a job someone else launched (``hosts/distributed.py``), compiling too (``hlo``: each program's fingerprint);
    process 0 shows whether every process compiled the same programs; ``save``: each process's report as
    ``FILE.pI.json``."""
    from jitscope.api.checks import check_choice, check_count, format_of
    from jitscope.api.commands.jobs import failures_sent, join_first
    from jitscope.api.results import TraceResult
    from jitscope.api.targets import enable_x64_if
    from jitscope.faults import user_code_scope
    from jitscope.load.mesh import mesh_scope
    from jitscope.report.formats import is_report_file
    from jitscope.report.views.jaxpr_layout import LOCATIONS
    from jitscope.report.writers.destination import write_result
    from jitscope.report.writers.progress import progress_on_stderr
    from jitscope.stdout import document_owns_stdout, user_output_to_stderr

    report_file = out if is_report_file(out) else None
    stage_folder = out if out is not None and report_file is None else None
    if stage_folder is not None:
        from jitscope.outputs import output_path
        from jitscope.report.writers.stage_files import check_stage_folder

        check_stage_folder(output_path(stage_folder))  # before anything runs: jitscope replaces that folder whole
    fmt_name = format_of(fmt, report_file)
    document_owns_stdout(fmt_name != "text" and report_file is None)  # the user's output, even after, to stderr
    wanted = parse_stages(stages)
    check_count("--depth", depth, least=0)
    check_choice("--locations", locations, LOCATIONS, none_ok=False)
    if distributed:
        refuse_for_processes(flags, "--distributed")
        wanted = wanted if "hlo" in wanted else (*wanted, "hlo")  # the compiled program, to compare
    _freeze_imports()
    enable_x64_if(flags.x64)
    place, job = join_first("trace", flags.devices, flags.mesh, distributed=distributed)
    # stdout: the document only (--distributed: process 0's merged report alone; gloo's lines go to stderr too)
    with user_output_to_stderr(job is not None), failures_sent(job), mesh_scope(flags.devices, flags.mesh), \
            progress_on_stderr("jitscope trace") as progress, \
            user_output_to_stderr(fmt_name != "text"), user_code_scope():
        report, profilers = run_trace(flags.load(abstract=True), flags.shapes, flags.static, flags.arg, wanted,
                                      effects, profile or bool(profile_html), progress, programs=place is not None,
                                      compile_profile=compile_profile)
    if place is not None:
        from jitscope.hosts.launch import this_process

        report = dataclasses.replace(report, process=this_process(place))
    if stage_folder is not None:
        from jitscope.report.writers.stage_files import write_outputs

        write_outputs(report, stage_folder, locations=locations, depth=depth, fold=bool(fold))
    fold = fold if fold is not None else _fold_by_default(report.traces, fmt_name, report_file)
    result = TraceResult(report, stages=wanted, locations=locations, depth=depth, fold=fold)
    if job is not None:
        _finish_trace_job(job, report, save=save, fmt_name=fmt_name, out=report_file,
                          show_own=lambda: write_result(result, fmt_name, report_file))
        return
    write_result(result, fmt_name, report_file)
    if profilers:
        from jitscope.report.writers.call_trees import show_profiles
        from jitscope.report.writers.console import make_console

        show_profiles(profilers, html=profile_html, console=make_console(stderr=fmt_name != "text"))
    failed_calls(report.traces)


def run_trace(
    targets: Sequence[str | TargetHandle],
    shapes: Sequence[str] | None,
    statics: list[str] | None,
    kwargs: list[str] | None,
    stages: Sequence[str],
    watch_effects: bool = True,
    profile: bool = False,
    progress: Callable[[float, int, str], None] | None = None,
    *, programs: bool = False, compile_profile: bool = False,
) -> tuple[TraceReport, list[tuple[str, Any]]]:
    """Trace (and lower/compile as ``stages`` need) every call of every target.

    ``shapes`` holds one spec per call (a call sequence); ``progress(done, total, text)`` is
    told before each call, so a CLI can show a bar. ``programs``: record each compiled program
    (``TraceRecord.program``: its fingerprint and HLO, for ``trace --processes``). ``compile_profile``:
    tracing sampled by line and XLA's compile captured by the profiler (``TraceRecord.compile_time``'s times).
    """
    from jitscope.jaxcompat import features
    from jitscope.jaxcompat.stages import environment

    features.check_supported()  # one clear line on a JAX without what tracing needs
    if compile_profile:  # the process's one-time start-up (MLIR context, lazy imports) is not the program's
        from jitscope.timing.cold import prime_process

        prime_process()
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
                                  want_jaxpr="jaxpr" in stages, sample_lines=compile_profile)
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

                capture = CompileCapture() if compile_profile else None
                failure = ""
                try:
                    record = dataclasses.replace(record, stages=lower_and_compile(handle.traced, stages, on_compiled,
                                                                                  capture))
                except CompileSkipped as skipped:
                    record = dataclasses.replace(record, stages=skipped.partial,
                                                 warnings=(*record.warnings, skipped.reason))
                except CompileError as err:
                    if capture is None:
                        raise
                    failure = err.message  # --compile-profile: the phases up to the failure, in the report
                text = module_text(compiled[0]) if compiled else None
                record = dataclasses.replace(record, sharding=probe.record,
                                             source_lines=source_lines_of(handle, record, compiled, text),
                                             library_calls=_library_calls(handle, text))
                record = dataclasses.replace(record, compile_time=compile_time_of(handle, record, text, capture,
                                                                                  failure))
                if programs and text:
                    from jitscope.run.programs import compiled_program

                    record = dataclasses.replace(record, program=compiled_program(text))
            records.append(record)
            if handle.profiler is not None:
                profilers.append((f"{record.target}({record.call})", handle.profiler))
    noted = static_variants_noted([(r.target, bool(r.static_argnums or r.static_argnames),
                                    r.compile_time if r.cache_hit_of is None else None) for r in records])
    records = [dataclasses.replace(r, compile_time=c) if r.cache_hit_of is None else r
               for r, c in zip(records, noted, strict=True)]
    return TraceReport(traces=tuple(records), environment=environment()), profilers


def _library_calls(handle: TraceHandle, text: str | None) -> tuple[LibraryCall, ...]:
    """The optimised HLO's custom calls, named, with the user's lines (read from the stack-frame tables)."""
    if not text:
        return ()
    from jitscope.profiling.library_calls import library_calls
    from jitscope.userframes import default_is_user_file

    return library_calls(text, handle.project.is_user_file if handle.project is not None else default_is_user_file)


def parse_stages(stages: str | Sequence[str], option: str = "--stages") -> tuple[str, ...]:
    """``"jaxpr,hlo"`` (``--stages``) or ``["jaxpr", "hlo"]`` (``stages=``) -> the stages, in the order jit makes
    them; one error line for a stage that is not one, or for none."""
    from jitscope.api.checks import text_list

    named = text_list(option, stages) or ()
    wanted = tuple(dict.fromkeys(s.strip().lower() for text in named for s in text.split(",") if s.strip()))
    unknown = [s for s in wanted if s not in STAGES]
    if unknown or not wanted:
        from jitscope.errors import BadValueError

        raise BadValueError(f"{option}: unknown stage(s) {', '.join(unknown)}" if unknown
                            else f"{option}: no stage asked for", hint=f"choose from {','.join(STAGES)}")
    return tuple(s for s in STAGES if s in wanted)


def _fold_by_default(records: Sequence[TraceRecord], fmt_name: str, report_file: Path | None) -> bool:
    """Fold library code in HTML (each fold opens there), and on a terminal when a jaxpr is longer than a
    screenful; text piped or written to a file stays whole, as JAX prints it."""
    if fmt_name == "html":
        return True
    from jitscope.report.writers.console import make_console, may_be_terminal

    if fmt_name != "text" or report_file is not None or not may_be_terminal(sys.stdout):
        return False

    console = make_console()
    return console.is_terminal and any(r.summary is not None and r.summary.n_eqns_total > console.height
                                       for r in records)


def failed_calls(records: Sequence[TraceRecord]) -> None:
    """After the report is out: one error line on stderr (exit 1) if the user's code failed in any call.

    The explained failure stays in the report on stdout; scripts and CI logs that only keep
    stderr still see what went wrong.
    """
    failed = [(r, r.diagnostic) for r in records if r.diagnostic is not None]
    if not failed:
        broken = [r for r in records if r.compile_time is not None and r.compile_time.failure]
        if broken:  # --compile-profile kept going to show the phases up to the failure
            raise CompileError(f"{broken[0].target}({broken[0].call}): {broken[0].compile_time.failure}",  # type: ignore[union-attr]
                               hint="the compile-time section of the report shows the phases up to the failure")
        return
    (first, diag), names = failed[0], [f"{r.target.rsplit(':', 1)[-1]}({r.call})" for r, _ in failed]
    if len(failed) == 1:
        message = f"{first.target}({first.call}) failed while tracing: {diag.message}"
    else:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        message = f"{len(failed)} of {len(records)} calls failed while tracing ({shown}); the first: {diag.message}"
    raise TraceError(message, hint="explained in the report on stdout")


def _freeze_imports() -> None:
    """Import jax, then hide everything imported so far from the garbage collector.

    jax's import leaves about a million long-lived objects; every full collection that
    tracing triggers would rescan them all, and interpreter shutdown would too. Freezing
    them makes ``jitscope trace`` about 0.2-0.3 s faster (see benchmarks/trace_overhead.py).
    This is process policy, so it lives in the command, not in the tracing library; bench
    does not do it, because there the collections are part of a real first call.
    """
    import gc

    import jax  # noqa: F401 - imported here so its objects are frozen with the rest

    gc.freeze()


def trace_processes_command(flags: TargetFlags, count: int, fmt_name: str, out: Path | None, *,
                            save: Path | None) -> None:
    """``jitscope trace TARGET --processes N``: N local CPU processes joined by ``jax.distributed`` (``bench
    --processes``'s launcher), each tracing and compiling the calls on the mesh spanning all their devices;
    whether they all compiled the same program, and their compile times, merged (``hosts/trace.py``).
    ``save``: each process's report as ``FILE.pI.json``; ``out``: the merged report."""
    from jitscope.api.commands.jobs import LAUNCH_TIMEOUT_S, write_merged
    from jitscope.hosts.launch import check_processes, launch_reports
    from jitscope.hosts.reports import read_launched
    from jitscope.hosts.trace import merge_trace
    from jitscope.report.writers.console import make_console

    refuse_for_processes(flags, "--processes")
    total = check_processes(count, flags.devices, flags.mesh, command="trace")
    argv = [*flags.argv("trace", total), "--stages", "jaxpr,hlo", "--no-effects"]
    make_console(stderr=True).print(f"jitscope trace: {count} local CPU processes joined by jax.distributed ...",
                                    highlight=False)
    loaded = launch_reports(argv, count, name="trace", read=read_launched(TraceReport, "trace"), save=save,
                            timeout=LAUNCH_TIMEOUT_S)
    write_merged(merge_trace(loaded), fmt_name, out)
    for _, report in loaded:
        failed_calls(report.traces)  # the user's code failed while tracing on some process: one line, exit 1


def refuse_for_processes(flags: TargetFlags, switch: str) -> None:
    """One line (exit 2) for what ``--processes``/``--distributed`` cannot trace: calls taken from elsewhere."""
    from jitscope.api.commands import jobs

    jobs.refuse_for_processes(switch, flags, "each process must trace exactly the same calls; replay them in one "
                              "process")


def _finish_trace_job(job: Job, report: TraceReport, *, save: Path | None, fmt_name: str, out: Path | None,
                      show_own: Callable[[], None]) -> None:
    """``--distributed``'s end (``jobs.finish_job``): process 0 shows whether every process compiled the same
    programs; one line (exit 1) after it when the user's code failed to trace on any process."""
    from jitscope.api.commands.jobs import finish_job
    from jitscope.hosts.trace import merge_trace

    loaded = finish_job(job, report, save=save, merge=merge_trace, fmt_name=fmt_name,
                        out=out, show_own=show_own)
    for _, each in loaded:
        failed_calls(each.traces)
