"""``jitscope lint`` and ``jitscope.lint``: static findings, and with ``--trace`` dynamic ones.

Read top to bottom: ``lint(paths)`` is the Python entry (static only: your code is read, never
run); ``lint_command`` is the command line's (``cli/lint.py`` parses the options and calls it):
config, ``--fix``/``--diff``, the ``--trace`` targets, the report. Static lint reads the code
(``linter/``); dynamic lint is ``lint_trace.py``, imported only when there are targets to trace, so
static lint never imports the tracer or JAX (the pre-commit hook and the language server start fast).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from jitscope.api.checks import check_codes, check_lint, spelled, text_list
from jitscope.errors import EXIT_FINDINGS, UsageError

if TYPE_CHECKING:
    from jitscope.api.results import LintResult
    from jitscope.config import LintConfig
    from jitscope.model.lint import Finding, LintReport

#: Formats lint writes: the shared four, plus SARIF 2.1.0 and GitHub Actions annotations.
LINT_FORMATS = ("text", "json", "markdown", "html", "sarif", "github")


def lint(
    paths: str | Path | Sequence[str | Path] = ".",
    *,
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
    fail_on: Literal["info", "warning", "error"] | None = None,
    config: str | Path | None = None,
    jobs: int | None = None,
    fix: bool = False,
) -> LintResult:
    """Lint Python files for JAX hazards, as ``jitscope lint --static-only`` (your code is read, never run).

    The ``[tool.jitscope.lint]`` table of the nearest ``pyproject.toml`` applies, with these options on top.
    ``fix=True`` first applies the safe fixes, as ``--fix`` (``result.fixed`` says how many); the
    findings are what remains.

    >>> result = jitscope.lint("src/")
    >>> [f"{f.file}:{f.line} {f.code}" for f in result.findings]
    """
    from jitscope.api.checks import check_flag, check_path, text_list
    from jitscope.api.results import LintResult
    from jitscope.linter.engine import lint_paths

    targets = [Path(p) for p in text_list("paths", paths, paths=True) or ()]
    check_path("config", config)
    check_flag("fix", fix)
    lint_config, root = _config(targets, Path(config) if config is not None else None, select=select, ignore=ignore,
                                exclude=exclude, fail_on=fail_on, jobs=jobs, cli=False)
    fixed = 0
    if fix:
        from jitscope.linter.fixing import fix_paths

        fixed = fix_paths(targets, lint_config, root=root, jobs=jobs, write=True).fixed
    return LintResult(lint_paths(targets, lint_config, root=root, jobs=jobs), fixed=fixed)


def _config(targets: list[Path], config: Path | None, *, select: object, ignore: object, exclude: object,
            fail_on: object, jobs: object, cli: bool) -> tuple[LintConfig, Path]:
    """The nearest pyproject.toml's ``[tool.jitscope.lint]`` (or ``config``'s) with the options on top, each
    checked as the CLI and the API check them (``cli``: name them as options)."""
    from jitscope.config import load_config

    select_codes = check_codes(spelled("select", cli), select)
    ignore_codes = check_codes(spelled("ignore", cli), ignore)
    excluded = text_list(spelled("exclude", cli), exclude) or ()
    check_lint(fail_on, jobs, cli=cli)
    cfg = load_config(targets[0] if targets else Path("."), config)
    lint_config = cfg.lint.with_overrides(select=select_codes, ignore=ignore_codes, exclude=excluded,
                                          fail_on=cast("Literal['info', 'warning', 'error'] | None", fail_on))
    return lint_config, cfg.root


def lint_command(
    paths: list[Path] | None, *, fmt: str, out: Path | None, select: list[str] | None, ignore: list[str] | None,
    fail_on: str | None, statistics: bool, exclude: list[str] | None, config: Path | None, jobs: int | None,
    show_source: bool, trace: list[str] | None, static_only: bool, shapes: list[str] | None,
    static: list[str] | None, arg: list[str] | None, devices: int | None, mesh: str | None, fix: bool, diff: bool,
) -> int:
    """``jitscope lint``: the report written, and the exit code (1: findings at or above --fail-on)."""
    from jitscope.linter.engine import lint_paths

    targets = paths or [Path(".")]
    lint_config, root = _config(targets, config, select=select, ignore=ignore, exclude=exclude, fail_on=fail_on,
                                jobs=jobs, cli=True)
    if static_only and trace:
        raise UsageError("--static-only and --trace contradict each other: drop one")
    trace_targets = [] if static_only else list(trace or lint_config.trace)
    if diff and (out is not None or fmt != "text"):
        raise UsageError("--diff prints a diff: drop --format/--out")
    fixed = 0
    if fix or diff:
        fixed = _fix(targets, lint_config, root, jobs, write=not diff)
        if diff:
            return EXIT_FINDINGS if fixed else 0
    extra: list[Finding] = []
    if trace_targets:  # runs the user's code: its prints go to stderr (stdout is the report's); its exits
        from jitscope.api.commands.lint_trace import dynamic_findings  # fail the trace, its tampering is
        from jitscope.faults import user_code_scope  # put back and reported
        from jitscope.stdout import document_owns_stdout, user_output_to_stderr

        document_owns_stdout(fmt != "text" and out is None)  # its atexit handlers and threads too
        with user_output_to_stderr(fmt != "text"), user_code_scope():
            extra = dynamic_findings(trace_targets, shapes, static, arg, devices, mesh)
    report = lint_paths(targets, lint_config, root=root, jobs=jobs, extra_findings=extra)
    _note_skipped(report)
    _write(report, fmt, out, show_source=show_source, statistics=statistics)
    if fix:
        _note(f"fixed {fixed} finding{'s' * (fixed != 1)}, {len(report.findings)} remaining")
    return EXIT_FINDINGS if report.failed else 0


def _write(report: LintReport, fmt: str, out: Path | None, *, show_source: bool, statistics: bool) -> None:
    from jitscope.api.results import LintResult
    from jitscope.report.writers.destination import write_report, write_result

    result = LintResult(report, show_source=show_source, statistics=statistics)
    if fmt in ("text", "markdown", "html"):
        write_result(result, fmt, out)
        return
    text = result.render(fmt)
    if text or out is not None:
        write_report(text, out)


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
