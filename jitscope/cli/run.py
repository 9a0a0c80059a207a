"""``jitscope run``: run a whole program and explain every compile and recompile.

This typer command is the documented interface and ``--help``; ``cli.app.main`` usually
reaches ``cli/run_command.py`` without it (see there: typer's import is not free), and a test keeps
the two parsers in agreement.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from jitscope.cli.options import format_option
from jitscope.cli.run_command import RunOptions, run_command


class LogMode(str, Enum):
    compiles = "compiles"
    recompiles = "recompiles"
    none = "none"


def run(
    program: Annotated[list[str] | None, typer.Argument(
        help="The script and its arguments (with -m: the module's arguments).", show_default=False,
        metavar="SCRIPT [ARGS]...")] = None,
    module: Annotated[str | None, typer.Option("-m", help="Run a module as 'python -m MODULE' would.",
                                               show_default=False)] = None,
    log: Annotated[LogMode, typer.Option(help="A line on stderr for every compile, only recompiles, or none.")]
    = LogMode.recompiles,
    effects: Annotated[bool, typer.Option("--effects/--no-effects",
                                          help="Watch for side effects while JAX traces.")] = True,
    max_compiles: Annotated[int | None, typer.Option(min=1, help="Fail (exit 1) if any jitted function compiles "
                                                     "more than N times.", show_default=False)] = None,
    fail_on_recompile: Annotated[bool, typer.Option(help="Fail (exit 1) if any jitted function compiles "
                                                    "twice.")] = False,
    max_compile_time: Annotated[float | None, typer.Option(min=0.0, help="Fail (exit 1) if tracing and compiling "
                                                           "take more than SECONDS in all.",
                                                           show_default=False)] = None,
    fmt: Annotated[str | None, format_option(
        what=" (text: the exit summary; json: the whole log, one versioned document; markdown; html: a page with "
        "a compile timeline, needs --out). Without --out the report goes to stderr (stdout is the program's); "
        "an --out FILE with no known suffix gets JSON, as it always did")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the report to this file (the suffix picks the format); "
                                             "the text summary still goes to stderr.", show_default=False)] = None,
    capture: Annotated[Path | None, typer.Option(
        help="Save every compile's abstract signature (shapes, dtypes, weak types, pytree structure, static "
        "values) to this folder, to replay later with trace/bench/profile TARGET --from DIR (no program run).",
        show_default=False)] = None,
) -> None:
    """Run a Python program (like 'python SCRIPT ARGS' or 'python -m MODULE ARGS') and report every
    jit compile, with the cause of every recompile. stdout is the program's: jitscope writes to stderr
    and --out only. Options go before SCRIPT."""
    options = RunOptions(program=tuple(program or ()), module=module, log=log.value, effects=effects,
                         max_compiles=max_compiles, fail_on_recompile=fail_on_recompile,
                         max_compile_time=max_compile_time, fmt=fmt,
                         out=str(out) if out is not None else None,
                         capture=str(capture) if capture is not None else None)
    raise typer.Exit(run_command(options))


def register(app: typer.Typer) -> None:
    app.command("run", context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})(run)
