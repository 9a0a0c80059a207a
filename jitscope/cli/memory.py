"""``jitscope memory``: what holds device memory at the compiled program's peak, by the user's source line."""

from __future__ import annotations

from typing import Annotated

import typer

from jitscope.api.checks import format_of
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
    ReportOutOpt,
    ShapesListOpt,
    TargetsArg,
    X64Opt,
    format_option,
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
    fmt: Annotated[str | None, format_option(what=" (json: one versioned document; html: the source "
                                                      "with a heat map of bytes live at the peak)")] = None,
    out: ReportOutOpt = None,
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
    from jitscope.api.commands.memory import memory_command
    from jitscope.api.targets import TargetFlags
    from jitscope.stdout import document_owns_stdout

    fmt_name = format_of(fmt, out)
    document_owns_stdout(fmt_name != "text" and out is None)  # the user's output, even later, to stderr
    flags = TargetFlags(targets, shapes, static, arg, x64, devices, mesh, from_run, call, keep_running, from_capture,
                        compile_number)
    if memory_command(flags, fmt_name, out, fail_over=fail_over, try_remat=try_remat):
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("memory", no_args_is_help=True)(memory)
