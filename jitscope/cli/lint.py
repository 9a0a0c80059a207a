"""``jitscope lint``: find side effects and recompilation hazards in traced code."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jitscope.api.checks import split_codes
from jitscope.cli.options import ArgOpt, DevicesOpt, MeshOpt, StaticOpt, format_option
from jitscope.errors import EXIT_FINDINGS, UsageError
from jitscope.report.formats import resolve_format
from jitscope.report.writers.destination import write_report, write_result

if TYPE_CHECKING:
    from jitscope.config import LintConfig
    from jitscope.model.lint import Finding, LintReport


class LintFormat(str, Enum):
    """The shared names (text, json, markdown, html), plus sarif and github."""

    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"
    sarif = "sarif"
    github = "github"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


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
        LintFormat | None,
        format_option(sarif=True, what=" (sarif: 2.1.0; github: Actions annotations; markdown: for "
                      "$GITHUB_STEP_SUMMARY; html: findings by file with code frames and rule docs)"),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Write the report to this file (.html, .md, .json, .sarif, .txt: the suffix picks the "
                     "format).", show_default=False),
    ] = None,
    select: CodesOpt = None,
    ignore: CodesOpt = None,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 when a finding is at or above this severity (default: from config, else warning).",
            show_default=False,
        ),
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
    from jitscope.api.stdout import user_output_to_stderr
    from jitscope.config import load_config
    from jitscope.linter.engine import lint_paths

    fmt_name = resolve_format(fmt, out, tuple(f.value for f in LintFormat))
    targets = paths or [Path(".")]
    cfg = load_config(targets[0], config)
    lint_config = cfg.lint.with_overrides(
        select=split_codes(select),
        ignore=split_codes(ignore),
        exclude=tuple(exclude or ()),
        fail_on=fail_on.value if fail_on else None,
    )
    if static_only and trace:
        raise UsageError("--static-only and --trace contradict each other: drop one")
    trace_targets = [] if static_only else list(trace or lint_config.trace)
    if diff and (out is not None or fmt_name != "text"):
        raise UsageError("--diff prints a diff: drop --format/--out")
    if fix or diff:
        fixed = _fix(targets, lint_config, cfg.root, jobs, write=not diff)
        if diff:
            raise typer.Exit(EXIT_FINDINGS if fixed else 0)
    extra: list[Finding] = []
    if trace_targets:  # runs the user's code: its prints go to stderr (stdout is the report's); its exits
        from jitscope.faults import user_code_scope  # fail the trace, its tampering is put back and reported

        with user_output_to_stderr(fmt_name != "text"), user_code_scope():
            extra = _dynamic_findings(trace_targets, shapes, static, arg, devices, mesh)
    report = lint_paths(targets, lint_config, root=cfg.root, jobs=jobs, extra_findings=extra)
    _note_skipped(report)
    from jitscope.api.results import LintResult

    result = LintResult(report, show_source=show_source, statistics=statistics)
    if fmt_name in ("text", "markdown", "html"):
        write_result(result, fmt_name, out)
    else:
        text = result.render(fmt_name)
        if text or out is not None:
            write_report(text, out)
    if fix:
        _note(f"fixed {fixed} finding{'s' * (fixed != 1)}, {len(report.findings)} remaining")
    if report.failed:
        raise typer.Exit(EXIT_FINDINGS)


def _fix(targets: list[Path], lint_config: LintConfig, root: Path, jobs: int | None, *, write: bool) -> int:
    """Apply (or, for --diff, print) the safe fixes; how many there were."""
    import sys

    from jitscope.linter.fixing import fix_paths

    outcome = fix_paths(targets, lint_config, root=root, jobs=jobs, write=write)
    if not write:
        sys.stdout.write(outcome.diff())
        files = len(outcome.files)
        _note(f"would fix {outcome.fixed} finding{'s' * (outcome.fixed != 1)} in {files} file{'s' * (files != 1)}")
    return outcome.fixed


def _note(text: str) -> None:
    from jitscope.report.writers.console import make_console

    make_console(stderr=True).print(text, markup=False, highlight=False)


def _note_skipped(report: LintReport) -> None:
    """One ``note:`` line on stderr per path that was not linted (a FIFO, a device...): stdout is the report's."""
    if not report.skipped:
        return
    from rich.markup import escape

    from jitscope.report.writers.console import make_console

    console = make_console(stderr=True)
    for skipped in report.skipped:
        console.print(f"[jitscope.muted]note:[/] skipped {escape(skipped.file)}: {escape(skipped.reason)}",
                      markup=True, highlight=False)


def _dynamic_findings(
    targets: list[str], shapes: list[str] | None, static: list[str] | None, arg: list[str] | None,
    devices: int | None = None, mesh: str | None = None,
) -> list[Finding]:
    """Trace the targets (abstract inputs, nothing allocated) and turn what happened into findings."""
    from jitscope.api.commands.lint import lint_targets
    from jitscope.load.calls import calls_from_flags, load_all
    from jitscope.load.mesh import example_mesh_scope, mesh_scope

    with mesh_scope(devices, mesh):  # set up before the targets load: JAX fixes the device count at start
        plan = [(t, calls_from_flags(t, shapes, static, arg)) for t in load_all(targets)]
        with example_mesh_scope(argset for _, calls in plan for argset in calls):
            return lint_targets(plan)


def register(app: typer.Typer) -> None:
    app.command("lint")(lint)
