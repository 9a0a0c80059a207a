"""``jitscope bench`` and ``jitscope.bench``: the first call against cached calls.

Read top to bottom: ``bench(fn, *args)`` is the Python entry; ``bench_command`` the command line's
(``cli/bench.py`` parses the options); both stand on ``run_bench``: plan the calls, measure, compare
with a baseline, save one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jitscope.api.checks import check_bench, check_flag, check_int, check_path, check_text
from jitscope.api.targets import TargetFlags, shape_list, target_of
from jitscope.load.target import TargetHandle
from jitscope.timing.compare import compare as compare_reports
from jitscope.timing.compare import load_report, parse_threshold
from jitscope.timing.plan import plan_calls
from jitscope.timing.runner import BenchOptions, BenchResult, Progress, bench_calls

if TYPE_CHECKING:
    from rich.console import Console

    from jitscope.api.results import BenchResult as BenchAPIResult
    from jitscope.model.bench import BenchReport

#: Threshold used to label changes when --compare is given without --fail-if-slower.
DEFAULT_THRESHOLD = 0.10


def bench(
    fn: Callable[..., Any], /, *args: Any,
    budget: float = 0.5,
    min_rounds: int = 5,
    cold_runs: int = 1,
    eager: bool = False,
    dispatch: bool = True,
    seed: int = 0,
    persistent_cache: str | None = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    shapes: str | Sequence[str] | None = None,
    save: str | Path | None = None,
    compare: str | Path | None = None,
    compile_profile: bool = False,
    **kwargs: Any,
) -> BenchAPIResult:
    """Time the first call of ``fn(*args, **kwargs)`` (trace, lower, compile, run, with JAX's in-memory
    caches cleared) against cached calls, each blocked on every output leaf, as ``jitscope bench``.

    ``save``/``compare``: a baseline JSON to write, or to compare with (``result.record.comparison``).
    ``compile_profile``: as ``--compile-profile``, the cold call's compile by XLA phase and by line.

    >>> result = jitscope.bench(train_step, model, optimizer, batch)
    >>> result.cached.median_s, result.cold.compile_s
    """
    from jitscope.api.results import BenchResult as BenchAPIResult

    check_bench(budget, min_rounds, cold_runs, cli=False)
    for name, flag in (("eager", eager), ("dispatch", dispatch)):
        check_flag(name, flag)
    check_int("seed", seed)
    check_text("persistent_cache", persistent_cache)
    check_path("save", save)
    check_path("compare", compare)
    handle = target_of(fn, args, kwargs, static_argnums, static_argnames, abstract=False, shapes=shapes)
    options = BenchOptions(budget=budget, min_rounds=min_rounds, cold_runs=cold_runs, eager=eager,
                           dispatch=dispatch, seed=seed, persistent_cache=persistent_cache,
                           compile_profile=compile_profile)
    result, _ = run_bench([handle], shape_list(shapes), options=options,
                          save=Path(save) if save is not None else None,
                          compare=Path(compare) if compare is not None else None)
    return BenchAPIResult(result.report)


def bench_command(flags: TargetFlags, options: BenchOptions, fmt_name: str, out: Path | None, *,
                  save: Path | None, compare: Path | None, fail_if_slower: str | None,
                  profile_html: Path | None, distributed: bool = False) -> int:
    """``jitscope bench``: the report on stdout or in ``out``, failed calls and regressions on stderr; the exit
    code (``EXIT_FINDINGS`` when a call failed or the regression gate did). ``distributed``: one process of a
    job someone else launched (``hosts/distributed.py``): process 0 shows every process's figures merged."""
    from jitscope.api.commands.jobs import failures_sent, finish_job, join_first
    from jitscope.api.results import BenchResult as BenchAPIResult
    from jitscope.api.targets import enable_x64_if
    from jitscope.errors import EXIT_FINDINGS
    from jitscope.faults import user_code_scope
    from jitscope.report.writers.call_trees import show_profiles
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.destination import write_result
    from jitscope.report.writers.progress import progress_bar
    from jitscope.stdout import user_output_to_stderr

    enable_x64_if(flags.x64)
    stderr = make_console(stderr=True)
    machine_readable = fmt_name != "text"
    if distributed:
        refuse_for_processes(flags, options, "--distributed")
    place, job = join_first("bench", flags.devices, flags.mesh, distributed=distributed)
    if place is not None:  # one process of several: the same rounds on each
        from jitscope.hosts.launch import lockstep

        options = lockstep(options)
    # --distributed: stdout is process 0's merged report alone (gloo's connection lines go to stderr too)
    with progress_bar(stderr, "jitscope bench") as progress, user_output_to_stderr(machine_readable or bool(job)), \
            user_code_scope(), failures_sent(job):
        result, failed = run_bench(flags.load(), flags.shapes, flags.static, flags.arg, options=options,
                                   save=None if job else save, compare=compare, fail_if_slower=fail_if_slower,
                                   progress=progress, devices=flags.devices, mesh=flags.mesh)
    if place is not None:
        from jitscope.hosts.launch import this_process

        result.report = dataclasses.replace(result.report, process=this_process(place))
    if job is not None:
        report = result.report
        loaded = finish_job(job, report, save=save, merge=_merge_bench, fmt_name=fmt_name, out=out,
                            show_own=lambda: write_result(BenchAPIResult(report), fmt_name, out))
        return EXIT_FINDINGS if report_process_failures(loaded, stderr) else 0
    console = make_console()
    write_result(BenchAPIResult(result.report), fmt_name, out)
    if result.profilers:
        show_profiles(result.profilers, html=profile_html, console=stderr if machine_readable or out else console,
                      subject="the cold call of", note="an extra cold call, not one of those timed")
    if failed:
        from rich.markup import escape

        comparison = result.report.comparison
        stderr.print(f"[jitscope.bad]regression:[/] {comparison.regressions if comparison else 0} metric(s) more "
                     f"than {escape(str(fail_if_slower))} slower than {escape(str(compare))}", highlight=False)
    if result.report.failures:
        report_failures(result.report, stderr)
    return EXIT_FINDINGS if failed or result.report.failures else 0


def bench_processes_command(flags: TargetFlags, options: BenchOptions, count: int, fmt_name: str,
                            out: Path | None, *, save: Path | None) -> int:
    """``jitscope bench TARGET --processes N``: N local CPU processes joined by ``jax.distributed``, each benching
    the calls on the mesh spanning all their devices, in lockstep; their figures merged (``hosts/``). ``save``:
    each process's report as ``FILE.pI.json`` (what ``jitscope merge`` reads); ``out``: the merged report."""
    from jitscope.api.commands.jobs import LAUNCH_TIMEOUT_S, write_merged
    from jitscope.errors import EXIT_FINDINGS
    from jitscope.hosts.bench import merge_bench
    from jitscope.hosts.launch import launch_reports
    from jitscope.report.writers.console import make_console

    argv = bench_argv(flags, options, count)
    stderr = make_console(stderr=True)
    stderr.print(f"jitscope bench: {count} local CPU processes joined by jax.distributed ...", highlight=False)
    loaded = launch_reports(argv, count, name="bench", read=load_report, save=save, timeout=LAUNCH_TIMEOUT_S)
    merged = merge_bench(loaded)
    write_merged(merged, fmt_name, out)
    return EXIT_FINDINGS if report_process_failures(loaded, stderr) else 0


def report_process_failures(loaded: Sequence[tuple[str, Any]], stderr: Console) -> bool:
    """The failed calls of the first process whose report has any (every process ran the same calls: its
    errors say it), on stderr, after the report they are in when there are several; whether there were any."""
    for where, report in loaded:
        if report.failures:
            if len(loaded) > 1:
                stderr.print(f"in {where}:", highlight=False)
            report_failures(report, stderr)
            return True
    return False


def refuse_for_processes(flags: TargetFlags, options: BenchOptions, switch: str) -> None:
    """One line (exit 2) for what ``--processes``/``--distributed`` cannot time: what would make the processes'
    calls differ."""
    from jitscope.api.commands import jobs

    same = "each process must make exactly the same calls; time that in one process"
    jobs.refuse_for_processes(switch, flags, same, (options.cold_process, "--cold-process", same),
                              (options.eager, "--eager", same), (options.profile, "--profile", same))


def bench_argv(flags: TargetFlags, options: BenchOptions, count: int) -> list[str]:
    """The command line each launched process runs (``--format``/``--out`` are the launcher's): the same calls on
    the devices of the whole mesh, which the processes share evenly."""
    from jitscope.hosts.launch import check_processes

    refuse_for_processes(flags, options, "--processes")
    total = check_processes(count, flags.devices, flags.mesh)
    argv = flags.argv("bench", total)
    argv += ["--min-rounds", str(options.min_rounds), "--cold-runs", str(options.cold_runs), "--seed",
             str(options.seed), "--dispatch" if options.dispatch else "--no-dispatch"]
    if options.persistent_cache is not None:
        argv += ["--persistent-cache", options.persistent_cache]
    return argv


def _merge_bench(loaded: list[tuple[str, Any]]) -> Any:
    from jitscope.hosts.bench import merge_bench

    return merge_bench(loaded)


def run_bench(
    targets: Sequence[str | TargetHandle],
    shapes: Sequence[str] | None = None,
    statics: Sequence[str] | None = None,
    kwargs: Sequence[str] | None = None,
    *,
    options: BenchOptions | None = None,
    save: Path | None = None,
    compare: Path | None = None,
    fail_if_slower: str | None = None,
    progress: Progress | None = None,
    devices: int | None = None,
    mesh: str | None = None,
) -> tuple[BenchResult, bool]:
    """Plan, measure, compare and save. Returns the result and whether it failed the regression gate.

    ``devices``/``mesh`` (``--devices``/``--mesh``) are set up before the targets load; inputs with a
    sharding in their spec are placed across the mesh, and the whole sharded step is timed.
    """
    from jitscope.load.mesh import example_mesh_scope, mesh_scope
    from jitscope.report.writers.json import dumps

    threshold = parse_threshold(fail_if_slower) if fail_if_slower is not None else DEFAULT_THRESHOLD
    baseline = load_report(compare) if compare is not None else None  # fail fast, before measuring
    if (devices is not None or mesh is not None) and options is not None and options.cold_process:
        from jitscope.errors import UsageError

        raise UsageError("--cold-process cannot be combined with --devices/--mesh yet",
                         hint="time the cold call in this process (drop --cold-process)")
    with mesh_scope(devices, mesh):
        calls = plan_calls(targets, shapes, statics, kwargs)
        with example_mesh_scope(argset for _, argset in calls):  # the examples' mesh, when --mesh is not given
            result = bench_calls(calls, options, progress)
            if options is not None and options.compile_profile:
                result.report = _with_compile_times(result.report, calls, result.compile_captures)
    failed = False
    if baseline is not None and compare is not None:
        comparison = compare_reports(result.report, baseline, threshold=threshold, baseline_name=str(compare))
        result.report = dataclasses.replace(result.report, comparison=comparison)
        failed = fail_if_slower is not None and comparison.regressions > 0
    if save is not None:
        from jitscope.outputs import write_atomic

        write_atomic(save, dumps(result.report) + "\n")  # a failed write keeps the previous baseline
    return result, failed


def _with_compile_times(report: BenchReport, calls: Sequence[tuple[TargetHandle, Any]],
                        captures: Mapping[str, Any]) -> BenchReport:
    """Each row's cold call by phase and by line (``--compile-profile``), from one more cold compile (its XLA
    phases from the first measured cold call's capture, where there is one: on a GPU); a note where its phases
    do not add up to the cold call's measured compile within 10%."""
    from jitscope.profiling.compile_record import profile_compile, static_variants_noted
    from jitscope.profiling.compile_time import TOLERANCE

    by_key = {row.key: i for i, row in enumerate(report.rows)}
    rows = list(report.rows)
    for target, argset in calls:
        key = f"{target.name}({argset.describe()})" + (f" [{argset.label}]" if argset.label else "")
        if key not in by_key:
            continue  # the call failed: reported as such
        row = rows[by_key[key]]
        record = profile_compile(target, argset, captures.get(key))
        notes = row.warnings
        measured = row.cold.median.compile
        if record is not None and record.phases and measured:
            gap = record.phase_total / measured - 1
            if abs(gap) > TOLERANCE:
                notes += (f"--compile-profile: XLA's phases add up to {record.phase_total / measured:.0%} of the "
                          "cold call's compile (a compile's time varies between runs; the machine may be busy)",)
        rows[by_key[key]] = dataclasses.replace(row, compile_time=record, warnings=notes)
    noted = static_variants_noted([(r.target, bool(r.statics), r.compile_time) for r in rows])
    return dataclasses.replace(report, rows=tuple(dataclasses.replace(r, compile_time=c)
                                                  for r, c in zip(rows, noted, strict=True)))


def report_failures(report: BenchReport, stderr: Console) -> None:
    """Each failed call's error and traceback (the user's frames), then one summary line naming them."""
    from rich.markup import escape

    for failure in report.failures:
        hint = f" ({failure.hint})" if failure.hint else ""
        stderr.print(f"[jitscope.bad]error:[/] {escape(failure.error + hint)}", highlight=False)
        if failure.detail:
            stderr.print(failure.detail, markup=False, highlight=False)
    total = len(report.rows) + len(report.failures)
    if total == 1:  # the one error line above says it all
        return
    names = ", ".join(f"{f.target.rsplit(':', 1)[-1]}({f.call})" + (f" [{f.label}]" if f.label else "")
                      for f in report.failures)
    stderr.print(f"[jitscope.bad]error:[/] {len(report.failures)} of {total} call(s) failed: {escape(names)}",
                 highlight=False)
