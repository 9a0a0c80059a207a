"""``jitscope profile``: where the compiled program's device time goes, by the user's source line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jitscope.cli.options import (
    FILE_OUT,
    ArgOpt,
    BenchStaticOpt,
    CallOpt,
    CompileOpt,
    ContinueOpt,
    DevicesOpt,
    DistributedOpt,
    FromCaptureOpt,
    FromRunOpt,
    MeshOpt,
    ReportOutOpt,
    ShapesListOpt,
    TargetsArg,
    X64Opt,
    format_option,
)
from jitscope.api.checks import check_distributed, check_profile, format_of
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
    fmt: Annotated[str | None, format_option(what=" (json: one versioned document; html: the source "
                                                      "with a heat map, top lines and ops)")] = None,
    out: ReportOutOpt = None,
    x64: X64Opt = False,
    devices: DevicesOpt = None,
    mesh: MeshOpt = None,
    from_run: FromRunOpt = False,
    call: CallOpt = 1,
    keep_running: ContinueOpt = False,
    from_capture: FromCaptureOpt = None,
    compile_number: CompileOpt = 1,
    processes: Annotated[int | None, typer.Option(
        "--processes", help="Profile in N local CPU processes joined by jax.distributed (gloo collectives), on a "
        "mesh spanning all their devices (--devices/--mesh: the whole mesh's), each making the same calls in "
        "lockstep; shows each process's device time (compute and collectives) and its top lines side by side, "
        "the skew and the straggler.", show_default=False)] = None,
    save: Annotated[Path | None, typer.Option(
        help="With --processes or --distributed: write each process's JSON report, FILE.p0.json, FILE.p1.json ... "
        "(what jitscope merge reads).", show_default=False, **FILE_OUT)] = None,
    distributed: DistributedOpt = False,
) -> None:
    """Profile TARGET's cached calls and attribute the device time to its source lines."""
    from jitscope.api.commands.profile import profile_command
    from jitscope.api.targets import TargetFlags
    from jitscope.stdout import document_owns_stdout

    fmt_name = format_of(fmt, out)
    document_owns_stdout(fmt_name != "text" and out is None)  # the user's output, even later, to stderr
    check_distributed(distributed, processes)
    check_profile(calls, budget, cli=True)
    flags = TargetFlags(targets, shapes, static, arg, x64, devices, mesh, from_run, call, keep_running, from_capture,
                        compile_number)
    if processes is not None:
        from jitscope.api.commands.profile import profile_processes_command

        if profile_processes_command(flags, processes, fmt_name, out, calls=calls, seed=seed, trace_out=trace_out,
                                     save=save):
            raise typer.Exit(EXIT_FINDINGS)
        return
    if save is not None and not distributed:
        raise UsageError("--save goes with --processes or --distributed",
                         hint="one process's report: --format json --out FILE.json")
    if profile_command(flags, fmt_name, out, calls=calls, budget=budget, seed=seed, trace_out=trace_out,
                       distributed=distributed, save=save):
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("profile", no_args_is_help=True)(profile)
