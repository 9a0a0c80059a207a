"""``jitscope bench``: the cold first call against cached calls, measured honestly."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from jitscope.model.bench import BenchReport

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
    check_count,
    check_seconds,
    enable_x64_if,
    format_option,
    resolve_format,
    resolve_from_run,
    write_result,
)
from jitscope.errors import EXIT_FINDINGS, UsageError

ShapesListOpt = Annotated[
    list[str] | None,
    typer.Option("--shapes", "-s", show_default=False,
                 help="Positional arguments as abstract arrays, e.g. \"f32[8,128], i32[8]\"; repeat for one row "
                 "per shape set. Without it, the module's JITSCOPE_EXAMPLES are used."),
]
BenchStaticOpt = Annotated[
    list[str] | None,
    typer.Option("--static", show_default=False,
                 help="A static argument NAME=PYTHON_LITERAL; repeat a name with other values for one row each."),
]


def bench(
    targets: TargetsArg,
    shapes: ShapesListOpt = None,
    static: BenchStaticOpt = None,
    arg: ArgOpt = None,
    budget: Annotated[float, typer.Option(help="Seconds of timed cached-call rounds per row.")] = 0.5,
    min_rounds: Annotated[int, typer.Option(help="Time at least this many rounds, whatever the budget.")] = 5,
    max_warmup: Annotated[float | None, typer.Option(
        help="Warm up for at most this many seconds waiting for a steady state (two consecutive warm-up windows "
        "within 5%). Default: 2 s on GPU/TPU, whose clocks ramp up under load; half of --budget on CPU.",
        show_default=False)] = None,
    cold_runs: Annotated[int, typer.Option(help="Cold first calls per row (the median is reported).")] = 1,
    cold_process: Annotated[bool, typer.Option("--cold-process", help="Also time a truly cold process: python start, import "
                                               "jax, load, first call.")] = False,
    eager: Annotated[bool, typer.Option("--eager", help="Also time the un-jitted function and show the jit speedup.")] = False,
    dispatch: Annotated[bool, typer.Option("--dispatch/--no-dispatch",
                                           help="Also time dispatch only (calls not blocked).")] = True,
    seed: Annotated[int, typer.Option(help="Seed for the random inputs.")] = 0,
    persistent_cache: Annotated[str | None, typer.Option(
        help="Persistent compilation cache: a directory to use it, 'off' to force it off. Default: off "
        "unless JAX's config (JAX_COMPILATION_CACHE_DIR) turns it on.", show_default=False)] = None,
    profile: Annotated[bool, typer.Option("--profile", help="Profile the Python side of a cold call with pyinstrument.")] = False,
    profile_html: Annotated[Path | None, typer.Option(help="Write the --profile report as HTML here.")] = None,
    fmt: Annotated[ReportFormat | None, format_option(what=" (json: one versioned document; html: phase bars, "
                                             "distributions and scaling charts)")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the report to this file (.html, .md, .json, .txt: the "
                                             "suffix picks the format).", show_default=False)] = None,
    save: Annotated[Path | None, typer.Option(help="Also write the JSON report to this file.")] = None,
    compare: Annotated[Path | None, typer.Option(help="A saved report (--save) to compare with.")] = None,
    fail_if_slower: Annotated[str | None, typer.Option(
        help="With --compare: exit 1 if a cached-call median or compile time is this much slower, e.g. 10%.",
        show_default=False)] = None,
    x64: X64Opt = False,
    devices: DevicesOpt = None,
    mesh: MeshOpt = None,
    from_run: FromRunOpt = False,
    call: CallOpt = 1,
    keep_running: ContinueOpt = False,
    from_capture: FromCaptureOpt = None,
    compile_number: CompileOpt = 1,
) -> None:
    """Time TARGET's cold first call (trace, lower, compile, first run) and its cached calls."""
    from jitscope.api.commands.bench import run_bench
    from jitscope.cli.stdout import user_output_to_stderr
    from jitscope.faults import user_code_scope
    from jitscope.report.writers.call_trees import show_profiles
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.progress import progress_bar
    from jitscope.timing.runner import BenchOptions

    fmt_name = resolve_format(fmt, out)
    if fail_if_slower is not None and compare is None:
        raise UsageError("--fail-if-slower needs --compare BASELINE.json")
    check_seconds("--budget", budget)
    check_seconds("--max-warmup", max_warmup, zero_ok=True)
    check_count("--min-rounds", min_rounds)
    check_count("--cold-runs", cold_runs, limit=1000)
    enable_x64_if(x64)
    options = BenchOptions(budget=budget, min_rounds=min_rounds, cold_runs=cold_runs, cold_process=cold_process,
                           eager=eager, dispatch=dispatch, profile=profile or profile_html is not None, seed=seed,
                           persistent_cache=persistent_cache, max_warmup=max_warmup)
    stderr = make_console(stderr=True)
    machine_readable = fmt_name != "text"
    with progress_bar(stderr, "jitscope bench") as progress, user_output_to_stderr(machine_readable), \
            user_code_scope():
        loaded = resolve_from_run(targets, from_run, call, keep_running, flags=(shapes, static, arg),
                                  capture=from_capture, compile_number=compile_number)
        result, failed = run_bench(loaded, shapes, static, arg, options=options, save=save, compare=compare,
                                   fail_if_slower=fail_if_slower, progress=progress, devices=devices, mesh=mesh)
    console = make_console()
    from jitscope.api.results import BenchResult

    write_result(BenchResult(result.report), fmt_name, out)
    if result.profilers:
        show_profiles(result.profilers, html=profile_html, console=stderr if machine_readable or out else console,
                      subject="the cold call of", note="an extra cold call, not one of those timed")
    if failed:
        from rich.markup import escape

        comparison = result.report.comparison
        stderr.print(f"[jitscope.bad]regression:[/] {comparison.regressions if comparison else 0} metric(s) more "
                     f"than {escape(str(fail_if_slower))} slower than {escape(str(compare))}", highlight=False)
    if result.report.failures:
        report_failures(result.report, stderr)
    if failed or result.report.failures:
        raise typer.Exit(EXIT_FINDINGS)


def report_failures(report: BenchReport, stderr: Console) -> None:
    """Each failed call's error and traceback (the user's frames), then one summary line naming them."""
    from rich.markup import escape

    for failure in report.failures:
        hint = f" ({failure.hint})" if failure.hint else ""
        stderr.print(f"[jitscope.bad]error:[/] {escape(failure.error + hint)}", highlight=False)
        if failure.detail:
            stderr.print(failure.detail, markup=False, highlight=False)
    total = len(report.rows) + len(report.failures)
    if total == 1:  # the one error line above says it all
        return
    names = ", ".join(f"{f.target.rsplit(':', 1)[-1]}({f.call})" + (f" [{f.label}]" if f.label else "")
                      for f in report.failures)
    stderr.print(f"[jitscope.bad]error:[/] {len(report.failures)} of {total} call(s) failed: {escape(names)}",
                 highlight=False)


def register(app: typer.Typer) -> None:
    app.command("bench", no_args_is_help=True)(bench)
