"""``jitscope profile``: where the compiled program's device time goes, by the user's source line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jitscope.cli.options import (
    ArgOpt,
    BenchStaticOpt,
    CallOpt,
    CompileOpt,
    ContinueOpt,
    DevicesOpt,
    FromCaptureOpt,
    FromRunOpt,
    MeshOpt,
    ReportFormat,
    ShapesListOpt,
    TargetsArg,
    X64Opt,
    check_count,
    check_seconds,
    format_option,
)
from jitscope.errors import EXIT_FINDINGS
from jitscope.report.formats import resolve_format


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
    from jitscope.api.commands.profile import profile_command
    from jitscope.api.targets import TargetFlags

    fmt_name = resolve_format(fmt, out)
    check_count("--calls", calls, limit=100_000)
    check_seconds("--budget", budget)
    flags = TargetFlags(targets, shapes, static, arg, x64, devices, mesh, from_run, call, keep_running, from_capture,
                        compile_number)
    if profile_command(flags, fmt_name, out, calls=calls, budget=budget, seed=seed, trace_out=trace_out):
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("profile", no_args_is_help=True)(profile)
