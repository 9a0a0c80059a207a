"""``jitscope trace``: every stage of what jit makes of a function."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

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
    ShapesOpt,
    StaticOpt,
    TargetsArg,
    X64Opt,
    enable_x64_if,
    format_option,
    is_report_file,
    resolve_format,
    resolve_from_run,
    write_result,
)
from jitscope.errors import TraceError, UsageError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from jitscope.model.trace import TraceRecord
    from jitscope.report.views.jaxpr_layout import LocationsMode

ALL_STAGES = ("jaxpr", "stablehlo", "hlo", "cost", "memory")


class LocationsChoice(str, Enum):
    full = "full"
    user = "user"
    none = "none"


def parse_stages(text: str) -> tuple[str, ...]:
    stages = tuple(dict.fromkeys(s.strip().lower() for s in text.split(",") if s.strip()))
    unknown = [s for s in stages if s not in ALL_STAGES]
    if unknown or not stages:
        raise UsageError(f"unknown stage(s) {', '.join(unknown) or '(none)'}", hint=f"choose from {','.join(ALL_STAGES)}")
    return stages


def trace(
    targets: TargetsArg,
    shapes: ShapesOpt = None,
    static: StaticOpt = None,
    arg: ArgOpt = None,
    stages: Annotated[str, typer.Option(help="Stages to show, comma-separated; stops early (no XLA compile "
                                        "for jaxpr,stablehlo).")] = ",".join(ALL_STAGES),
    depth: Annotated[int | None, typer.Option(
        min=0, help="Levels of nested jaxprs (scan/while/cond bodies, inner jit) to show; deeper ones collapse to "
        "<jaxpr: N eqns collapsed>. 0 collapses every nested jaxpr, 1 shows a scan body but collapses what is "
        "nested in it. Default: show all.", show_default=False)] = None,
    locations: Annotated[LocationsChoice, typer.Option(
        "--locations", help="Annotate each equation with your file:line: full (and the library line it called "
        "into, as in gpt.py:17 <- flax/.../attention.py:288), user (your line only) or none.")] = LocationsChoice.full,
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
    fmt: Annotated[ReportFormat | None, format_option(what=" (json: one versioned document; html: IR side by side with "
                                             "your source, cross-linked)")] = None,
    profile: Annotated[bool, typer.Option("--profile", help="Profile the Python side of tracing with pyinstrument.")]
    = False,
    profile_html: Annotated[Path | None, typer.Option(help="Write the --profile report as HTML here.")] = None,
    x64: X64Opt = False,
    devices: DevicesOpt = None,
    mesh: MeshOpt = None,
    from_run: FromRunOpt = False,
    call: CallOpt = 1,
    keep_running: ContinueOpt = False,
    from_capture: FromCaptureOpt = None,
    compile_number: CompileOpt = 1,
) -> None:
    """Trace TARGET with abstract inputs and show its jaxpr, StableHLO, HLO, cost and memory."""
    from jitscope.api.commands.trace import run_trace
    from jitscope.load.mesh import mesh_scope
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.stage_files import write_outputs

    report_file = out if is_report_file(out) else None
    if out is not None and report_file is None:
        from jitscope.outputs import output_path
        from jitscope.report.writers.stage_files import check_stage_folder

        check_stage_folder(output_path(out))  # before anything runs: jitscope replaces that folder whole
    fmt_name = resolve_format(fmt, report_file)
    wanted = parse_stages(stages)
    _freeze_imports()
    enable_x64_if(x64)
    from jitscope.cli.stdout import user_output_to_stderr
    from jitscope.faults import user_code_scope
    from jitscope.report.writers.progress import progress_bar

    with mesh_scope(devices, mesh), progress_bar(make_console(stderr=True), "jitscope trace") as progress, \
            user_output_to_stderr(fmt_name != "text"), user_code_scope():  # stdout: the document only
        loaded = resolve_from_run(targets, from_run, call, keep_running, flags=(shapes, static, arg),
                                  capture=from_capture, compile_number=compile_number, abstract=True)
        report, profilers = run_trace(loaded, shapes, static, arg, wanted, effects, profile or bool(profile_html),
                                      progress)
    where = cast("LocationsMode", "none" if no_locations else locations.value)
    if out is not None and report_file is None:
        write_outputs(report, out, locations=where, depth=depth, fold=bool(fold_libraries))
    from jitscope.api.results import TraceResult

    fold = fold_libraries if fold_libraries is not None else _fold_by_default(report.traces, fmt_name, report_file)
    write_result(TraceResult(report, stages=wanted, locations=where, depth=depth, fold=fold), fmt_name, report_file)
    if profilers:
        from jitscope.report.writers.call_trees import show_profiles

        show_profiles(profilers, html=profile_html, console=make_console(stderr=fmt_name != "text"))
    failed_calls(report.traces)


def _fold_by_default(records: Sequence[TraceRecord], fmt_name: str, report_file: Path | None) -> bool:
    """Fold library code in HTML (each fold opens there), and on a terminal when a jaxpr is longer than a
    screenful; text piped or written to a file stays whole, as JAX prints it."""
    if fmt_name == "html":
        return True
    if fmt_name != "text" or report_file is not None:
        return False
    from jitscope.report.writers.console import make_console

    console = make_console()
    return console.is_terminal and any(r.summary is not None and r.summary.n_eqns_total > console.height
                                       for r in records)


def failed_calls(records: Sequence[TraceRecord]) -> None:
    """After the report is out: one error line on stderr (exit 1) if the user's code failed in any call.

    The explained failure stays in the report on stdout; scripts and CI logs that only keep
    stderr still see what went wrong.
    """
    failed = [(r, r.diagnostic) for r in records if r.diagnostic is not None]
    if not failed:
        return
    (first, diag), names = failed[0], [f"{r.target.rsplit(':', 1)[-1]}({r.call})" for r, _ in failed]
    if len(failed) == 1:
        message = f"{first.target}({first.call}) failed while tracing: {diag.message}"
    else:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        message = f"{len(failed)} of {len(records)} calls failed while tracing ({shown}); the first: {diag.message}"
    raise TraceError(message, hint="explained in the report on stdout")


def _freeze_imports() -> None:
    """Import jax, then hide everything imported so far from the garbage collector.

    jax's import leaves about a million long-lived objects; every full collection that
    tracing triggers would rescan them all, and interpreter shutdown would too. Freezing
    them makes ``jitscope trace`` about 0.2-0.3 s faster (see benchmarks/trace_overhead.py).
    This is process policy, so it lives in the command, not in the tracing library; bench
    does not do it, because there the collections are part of a real first call.
    """
    import gc

    import jax  # noqa: F401 - imported here so its objects are frozen with the rest

    gc.freeze()


def register(app: typer.Typer) -> None:
    app.command("trace", no_args_is_help=True)(trace)

