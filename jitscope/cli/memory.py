"""``jitscope memory``: what holds device memory at the compiled program's peak, by the user's source line."""

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
    enable_x64_if,
    format_option,
    resolve_format,
    resolve_from_run,
    write_result,
)
from jitscope.errors import EXIT_FINDINGS


def memory(
    targets: TargetsArg,
    shapes: ShapesListOpt = None,
    static: BenchStaticOpt = None,
    arg: ArgOpt = None,
    fail_over: Annotated[str | None, typer.Option(
        help="Exit 1 when a call needs more device memory than this (arguments + outputs + temporaries, per "
             "device): bytes, or 512MiB, 12GiB, 2GB.", show_default=False)] = None,
    try_remat: Annotated[bool, typer.Option(
        help="Where the program has a backward pass, compile it again with each function given to jax.grad, "
             "jax.value_and_grad or jax.vjp under jax.checkpoint, and show the measured peak.")] = False,
    fmt: Annotated[ReportFormat | None, format_option(what=" (json: one versioned document; html: the source "
                                                      "with a heat map of bytes live at the peak)")] = None,
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
    """Compile TARGET and show what holds device memory at its peak, by source line (nothing runs)."""
    from jitscope.buffers.gate import parse_bytes
    from jitscope.buffers.runner import MemoryOptions, memory_calls
    from jitscope.cli.stdout import user_output_to_stderr
    from jitscope.faults import user_code_scope
    from jitscope.load.mesh import example_mesh_scope, mesh_scope
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.progress import progress_bar
    from jitscope.timing.plan import plan_calls

    fmt_name = resolve_format(fmt, out)
    limit = parse_bytes(fail_over) if fail_over is not None else None
    enable_x64_if(x64)
    stderr = make_console(stderr=True)
    options = MemoryOptions(fail_over=limit, try_remat=try_remat)
    with mesh_scope(devices, mesh), progress_bar(stderr, "jitscope memory") as progress, \
            user_output_to_stderr(fmt_name != "text"), user_code_scope():
        loaded = resolve_from_run(targets, from_run, call, keep_running, flags=(shapes, static, arg),
                                  capture=from_capture, compile_number=compile_number)
        planned = plan_calls(loaded, shapes, static, arg)
        with example_mesh_scope(argset for _, argset in planned):
            report = memory_calls(planned, options, progress)
    from jitscope.api.commands.memory import MemoryResult

    terminal = fmt_name == "text" and out is None
    if report.rows or not terminal:
        write_result(MemoryResult(report, failures_inline=not terminal), fmt_name, out)
    for line in report.over:
        stderr.print(f"error: {line}", markup=False, highlight=False)
    if report.failures:
        report_failures(report, stderr)  # type: ignore[arg-type]  # the same failure records as bench's
    if report.failures or report.over:
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("memory", no_args_is_help=True)(memory)
