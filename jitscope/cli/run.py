"""``jitscope run``: run a whole program and explain every compile and recompile."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from jitscope.errors import UsageError


class LogMode(str, Enum):
    compiles = "compiles"
    recompiles = "recompiles"
    none = "none"


class RunFormat(str, Enum):
    text = "text"
    json = "json"


def run(
    ctx: typer.Context,
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
    fmt: Annotated[RunFormat, typer.Option("--format", "-f", help="The exit summary on stderr as text, or the "
                                           "whole log as one JSON document.")] = RunFormat.text,
    out: Annotated[Path | None, typer.Option(help="Write the whole log as JSON to this file.",
                                             show_default=False)] = None,
) -> None:
    """Run a Python program (like 'python SCRIPT ARGS' or 'python -m MODULE ARGS') and report every
    jit compile, with the cause of every recompile. stdout is the program's: jitscope writes to stderr
    and --out only. Options go before SCRIPT."""
    from jitscope.render.console import make_console
    from jitscope.run.program import Program, check_program
    from jitscope.run.session import run_observed
    from jitscope.run.summary import Gates

    args = list(program or [])
    if module is not None:
        target = Program(None, module, tuple(args))
    elif args:
        target = Program(args[0], None, tuple(args[1:]))
    else:
        raise UsageError("nothing to run", hint="give a script path, or -m MODULE")
    check_program(target)
    stderr = make_console(stderr=True)
    from jitscope.render.run import render_event_line, should_log

    def on_event(event: object) -> None:
        from jitscope.model.run import CompileEvent

        if isinstance(event, CompileEvent) and should_log(event, log.value):
            stderr.print(render_event_line(event))

    gates = Gates(max_compiles, fail_on_recompile, max_compile_time)
    record = run_observed(target, effects=effects, gates=gates, on_event=on_event)
    _report(record, fmt, out)
    if record.gate_failures:
        stderr.print(f"[jitscope.bad]error:[/] jitscope run: {'; '.join(record.gate_failures)}", markup=True,
                     highlight=False)
        raise typer.Exit(1)
    raise typer.Exit(record.exit_code)


def _report(record: object, fmt: RunFormat, out: Path | None) -> None:
    from jitscope.model.run import RunRecord
    from jitscope.render.console import make_console
    from jitscope.render.json import dumps
    from jitscope.render.run import render_summary

    assert isinstance(record, RunRecord)
    stderr = make_console(stderr=True)
    if out is not None:
        out.write_text(dumps(record) + "\n", encoding="utf-8")
    if fmt is RunFormat.json and out is None:
        stderr.file.write(dumps(record) + "\n")
    else:
        stderr.print(render_summary(record))
        if out is not None:
            stderr.print(f"jitscope run: log written to {out}", style="jitscope.muted", markup=False)


def register(app: typer.Typer) -> None:
    app.command("run", context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})(run)
