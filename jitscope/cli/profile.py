"""``jitscope profile``: where the compiled program's device time goes, by the user's source line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jitscope.cli.bench import BenchStaticOpt, ShapesListOpt, report_failures
from jitscope.cli.options import (
    ArgOpt,
    CallOpt,
    CompileOpt,
    ContinueOpt,
    DevicesOpt,
    FromCaptureOpt,
    FromRunOpt,
    MeshOpt,
    ReportFormat,
    TargetsArg,
    X64Opt,
    check_count,
    check_seconds,
    enable_x64_if,
    format_option,
    resolve_format,
    resolve_from_run,
    write_result,
)
from jitscope.errors import EXIT_FINDINGS, UsageError


def profile(
    targets: TargetsArg,
    shapes: ShapesListOpt = None,
    static: BenchStaticOpt = None,
    arg: ArgOpt = None,
    calls: Annotated[int, typer.Option(help="Cached calls to run under the profiler (times are per call).")] = 20,
    budget: Annotated[float, typer.Option(help="Seconds of cached calls timed without the profiler, as bench "
                                          "does: the time the profile is reconciled against.")] = 0.3,
    seed: Annotated[int, typer.Option(help="Seed for the random inputs.")] = 0,
    trace_out: Annotated[Path | None, typer.Option(
        help="Keep the raw profile in this folder (open it in Perfetto, XProf or TensorBoard).",
        show_default=False)] = None,
    fmt: Annotated[ReportFormat | None, format_option(what=" (json: one versioned document; html: the source "
                                                      "with a heat map, top lines and ops)")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the report to this file (.html, .md, .json, .txt: the "
                                             "suffix picks the format).", show_default=False)] = None,
    x64: X64Opt = False,
    devices: DevicesOpt = None,
    mesh: MeshOpt = None,
    from_run: FromRunOpt = False,
    call: CallOpt = 1,
    keep_running: ContinueOpt = False,
    from_capture: FromCaptureOpt = None,
    compile_number: CompileOpt = 1,
) -> None:
    """Profile TARGET's cached calls and attribute the device time to its source lines."""
    from jitscope.cli.stdout import user_output_to_stderr
    from jitscope.faults import user_code_scope
    from jitscope.load.mesh import example_mesh_scope, mesh_scope
    from jitscope.profiling.runner import ProfileOptions, profile_calls
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.progress import progress_bar
    from jitscope.timing.plan import plan_calls

    fmt_name = resolve_format(fmt, out)
    check_count("--calls", calls, limit=100_000)
    check_seconds("--budget", budget)
    if trace_out is not None:
        if trace_out.exists() and not trace_out.is_dir():
            raise UsageError(f"--trace-out {trace_out} is a file", hint="name a folder (it is created)")
        trace_out.mkdir(parents=True, exist_ok=True)
    enable_x64_if(x64)
    stderr = make_console(stderr=True)
    options = ProfileOptions(calls=calls, budget=budget, seed=seed,
                             trace_out=str(trace_out) if trace_out is not None else None)
    with mesh_scope(devices, mesh), progress_bar(stderr, "jitscope profile") as progress, \
            user_output_to_stderr(fmt_name != "text"), user_code_scope():
        loaded = resolve_from_run(targets, from_run, call, keep_running, flags=(shapes, static, arg),
                                  capture=from_capture, compile_number=compile_number)
        planned = plan_calls(loaded, shapes, static, arg)
        with example_mesh_scope(argset for _, argset in planned):  # the examples' mesh, without --mesh
            report = profile_calls(planned, options, progress)
    from jitscope.api.results import ProfileResult

    terminal = fmt_name == "text" and out is None
    if report.rows or not terminal:  # on a terminal with no rows, the errors on stderr are the whole story
        write_result(ProfileResult(report, failures_inline=not terminal), fmt_name, out)
    if trace_out is not None:
        stderr.print(f"raw profile kept in {trace_out} (open the .xplane.pb in XProf/TensorBoard, or the "
                     ".trace.json.gz in Perfetto)", markup=False, highlight=False)
    if report.failures:
        report_failures(report, stderr)  # type: ignore[arg-type]  # the same failure records as bench's
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("profile", no_args_is_help=True)(profile)
