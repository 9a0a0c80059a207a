"""``jitscope lint``: find side effects and recompilation hazards in traced code (options here; the command is
``api/commands/lint.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jitscope.api.checks import format_of
from jitscope.cli.options import FILE_OUT, ArgOpt, DevicesOpt, MeshOpt, StaticOpt, choice_option, format_option
from jitscope.model.lint import SEVERITIES


CodesOpt = Annotated[
    list[str] | None,
    typer.Option(
        help="Codes, prefixes (JS1) or rule names; comma-separated or repeated. Replaces the config's value.",
        show_default=False,
    ),
]


def lint(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Files or directories (default: .).", show_default=False)
    ] = None,
    fmt: Annotated[
        str | None,
        format_option(sarif=True, what=" (sarif: 2.1.0; github: Actions annotations; markdown: for "
                      "$GITHUB_STEP_SUMMARY; html: findings by file with code frames and rule docs)"),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Write the report to this file (.html, .md, .json, .sarif, .txt: the suffix picks the "
                     "format).", show_default=False, **FILE_OUT),
    ] = None,
    select: CodesOpt = None,
    ignore: CodesOpt = None,
    fail_on: Annotated[
        str | None,
        choice_option("--fail-on", choices=SEVERITIES,
                      help="Exit 1 when a finding is at or above this severity (default: from config, else warning)."),
    ] = None,
    statistics: Annotated[
        bool, typer.Option("--statistics", help="Add a table of findings per rule.")
    ] = False,
    exclude: Annotated[
        list[str] | None, typer.Option(help="Extra glob patterns to skip (repeatable).", show_default=False)
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            help="Read tool.jitscope.lint from this file instead of the nearest pyproject.toml.",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", "-j", help="Worker processes (default: all cores).", show_default=False),
    ] = None,
    show_source: Annotated[
        bool,
        typer.Option(
            "--show-source/--no-show-source", help="Show a code frame under each finding (text format)."
        ),
    ] = True,
    trace: Annotated[
        list[str] | None,
        typer.Option(
            "--trace",
            help="Also trace TARGET (module:fn, file.py:fn, module:*) with jitscope's tracer and report what "
            "really happened: side effects (also in helpers), trace failures, hidden state, recompiles. "
            "Repeatable; default: trace = [...] in the config.",
            show_default=False,
        ),
    ] = None,
    static_only: Annotated[
        bool,
        typer.Option(
            "--static-only",
            help="Static analysis only: ignore trace = [...] in the config, so nothing of yours is imported "
            "or run (what the pre-commit hook uses).",
        ),
    ] = False,
    shapes: Annotated[
        list[str] | None,
        typer.Option(
            "--shapes",
            "-s",
            help="Arguments for the --trace targets, e.g. \"f32[8], i32[]\"; repeat it to describe a call "
            "sequence (each one call) and see which calls recompile. Default: JITSCOPE_EXAMPLES.",
            show_default=False,
        ),
    ] = None,
    static: StaticOpt = None,
    arg: ArgOpt = None,
    devices: DevicesOpt = None,
    mesh: MeshOpt = None,
    fix: Annotated[
        bool,
        typer.Option("--fix", help="Apply the safe fixes (JS101, JS201, JS204 where the rewrite is provably "
                     "equivalent), then report what remains."),
    ] = False,
    diff: Annotated[
        bool,
        typer.Option("--diff", help="Print the safe fixes as a unified diff and write nothing (exit 1 when there "
                     "is something to fix)."),
    ] = False,
) -> None:
    """Lint Python files for JAX hazards (static analysis: never imports or runs your code)."""
    from jitscope.api.commands.lint import LINT_FORMATS, lint_command

    code = lint_command(paths, fmt=format_of(fmt, out, LINT_FORMATS), out=out, select=select, ignore=ignore,
                        fail_on=fail_on, statistics=statistics, exclude=exclude,
                        config=config, jobs=jobs, show_source=show_source, trace=trace, static_only=static_only,
                        shapes=shapes, static=static, arg=arg, devices=devices, mesh=mesh, fix=fix, diff=diff)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("lint")(lint)
