"""``jitscope trace``: every stage of what jit makes of a function (typer's options here, for ``--help``
and the unusual command lines; ``cli/trace_command.py`` parses the usual ones without typer and runs the
command, ``api/commands/trace.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jitscope.cli.options import (
    FILE_OUT,
    ArgOpt,
    CallOpt,
    CompileOpt,
    ContinueOpt,
    DevicesOpt,
    DistributedOpt,
    FromCaptureOpt,
    FromRunOpt,
    MeshOpt,
    ShapesOpt,
    StaticOpt,
    TargetsArg,
    X64Opt,
    choice_option,
    format_option,
)
from jitscope.cli.trace_command import ALL_STAGES, LOCATIONS, TraceOptions, trace_main


def trace(
    targets: TargetsArg,
    shapes: ShapesOpt = None,
    static: StaticOpt = None,
    arg: ArgOpt = None,
    stages: Annotated[str, typer.Option(help="Stages to show, comma-separated; stops early (no XLA compile "
                                        "for jaxpr,stablehlo).")] = ",".join(ALL_STAGES),
    depth: Annotated[int | None, typer.Option(
        help="Levels of nested jaxprs (scan/while/cond bodies, inner jit) to show; deeper ones collapse to "
        "<jaxpr: N eqns collapsed>. 0 collapses every nested jaxpr, 1 shows a scan body but collapses what is "
        "nested in it. Default: show all.", show_default=False)] = None,
    locations: Annotated[str, choice_option(
        "--locations", choices=LOCATIONS, help="Annotate each equation with your file:line: full (and the library "
        "line it called into, as in gpt.py:17 <- flax/.../attention.py:288), user (your line only) or none.")] = "full",
    no_locations: Annotated[bool, typer.Option("--no-locations", hidden=True,
                                               help="The same as --locations none.")] = False,
    fold_libraries: Annotated[bool | None, typer.Option(
        "--fold-libraries/--no-fold-libraries", help="Show each call into a library (an optax update, a flax "
        "attention block) as one line under your line, and shorten long variable lists. Default: on for a "
        "terminal when the jaxpr is longer than a screenful, and in HTML (where each fold opens).",
        show_default=False)] = None,
    effects: Annotated[bool, typer.Option("--effects/--no-effects",
                                          help="Watch for trace-time side effects.")] = True,
    out: Annotated[Path | None, typer.Option(
        help="A report file (.html, .md, .json, .txt: the suffix picks the format), or a folder to also write "
        "each stage to (jaxpr.txt, stablehlo.mlir, hlo.txt, ... and report.json).", show_default=False)] = None,
    fmt: Annotated[str | None, format_option(what=" (json: one versioned document; html: IR side by side with "
                                             "your source, cross-linked)")] = None,
    profile: Annotated[bool, typer.Option("--profile", help="Profile the Python side of tracing with pyinstrument.")]
    = False,
    profile_html: Annotated[Path | None, typer.Option(help="Write the --profile report as HTML here.",
                                                      **FILE_OUT)] = None,
    compile_profile: Annotated[bool, typer.Option(
        "--compile-profile", help="Why the compile is slow: time tracing by line of your code and capture XLA's "
        "compile with jax.profiler, for the compile-time section's times by phase and by line (the capture adds "
        "about 50 ms to each compile).")] = False,
    x64: X64Opt = False,
    devices: DevicesOpt = None,
    mesh: MeshOpt = None,
    from_run: FromRunOpt = False,
    call: CallOpt = 1,
    keep_running: ContinueOpt = False,
    from_capture: FromCaptureOpt = None,
    compile_number: CompileOpt = 1,
    processes: Annotated[int | None, typer.Option(
        "--processes", help="Trace and compile in N local CPU processes joined by jax.distributed, on a mesh "
        "spanning all their devices (--devices/--mesh: the whole mesh's); shows whether every process compiled the "
        "same program (the fingerprint jitscope run records; the first difference where not: the likely cause of "
        "a hang) and each one's compile time.", show_default=False)] = None,
    save: Annotated[Path | None, typer.Option(
        help="With --processes or --distributed: write each process's JSON report, FILE.p0.json, FILE.p1.json ... "
        "(what jitscope merge reads).", show_default=False, **FILE_OUT)] = None,
    distributed: DistributedOpt = False,
) -> None:
    """Trace TARGET with abstract inputs and show its jaxpr, StableHLO, HLO, cost and memory."""
    options = dict(locals())
    trace_main(TraceOptions.of(options))


def register(app: typer.Typer) -> None:
    app.command("trace", no_args_is_help=True)(trace)

