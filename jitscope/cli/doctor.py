"""``jitscope doctor``: run a program and say what to fix first, ranked by what each problem cost in the run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jitscope.api.checks import format_of
from jitscope.cli.options import (
    ArgOpt,
    BenchStaticOpt,
    CallOpt,
    ContinueOpt,
    FromRunOpt,
    ShapesListOpt,
    X64Opt,
    format_option,
)


def doctor(
    program: Annotated[list[str] | None, typer.Argument(
        help="The script and its arguments (with -m: the module's arguments), or one target MODULE:FN or "
             "path.py:FN (with --from-run: the target, then the program's arguments).", show_default=False,
        metavar="SCRIPT [ARGS]... | TARGET")] = None,
    module: Annotated[str | None, typer.Option("-m", help="Run a module as 'python -m MODULE' would.",
                                               show_default=False)] = None,
    fail_on: Annotated[str | None, typer.Option(
        help="Exit 1 when the avoidable part of the run is over this: waste>10% (a share of the wall time), "
             "waste>2s.", show_default=False)] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Show every finding in full on the terminal, not the "
                                                         "top five.")] = False,
    effects: Annotated[bool, typer.Option("--effects/--no-effects",
                                          help="Watch for side effects while JAX traces.")] = True,
    fmt: Annotated[str | None, format_option(
        what=" (json: one versioned document; html needs --out). Without --out the report goes to stderr "
             "(stdout is the program's)")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the report to this file (the suffix picks the format); "
                                             "the summary still goes to stderr.", show_default=False)] = None,
    shapes: ShapesListOpt = None,
    static: BenchStaticOpt = None,
    arg: ArgOpt = None,
    x64: X64Opt = False,
    from_run: FromRunOpt = False,
    call: CallOpt = 1,
    keep_running: ContinueOpt = False,
) -> None:
    """Run a Python program (like 'python SCRIPT ARGS') and say what to fix first: every problem the run hit
    (recompiles by cause, jits built in a loop, work outside jit, slow compiles, side effects while tracing),
    ranked by the seconds it cost, each with the change and its gain; memory findings (missing donation,
    residuals remat drops) ranked apart, by bytes at the peak. With a TARGET (MODULE:FN, with its examples,
    --shapes or --from-run): its compile and cached-call times, compile time by line when the compile
    dominates, its memory findings and the recompiles its static arguments cost. Options go before SCRIPT."""
    from jitscope.api.commands.doctor import doctor_command
    from jitscope.api.targets import TargetFlags

    fmt_name = format_of(fmt, out)
    flags = TargetFlags(list(program or ()), shapes, static, arg, x64, None, None, from_run, call, keep_running)
    raise typer.Exit(doctor_command(tuple(program or ()), module, fmt_name, out, fail_on=fail_on,
                                    show_all=show_all, effects=effects, flags=flags))


def register(app: typer.Typer) -> None:
    app.command("doctor", context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})(doctor)
