"""``jitscope bench``: the cold first call against cached calls, measured honestly (options here; the command
is ``api/commands/bench.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jitscope.api.checks import check_bench, check_distributed, format_of
from jitscope.cli.options import (
    FILE_OUT,
    ArgOpt,
    BenchStaticOpt,
    CallOpt,
    CompileOpt,
    ContinueOpt,
    DevicesOpt,
    DistributedOpt,
    FromCaptureOpt,
    FromRunOpt,
    MeshOpt,
    ReportOutOpt,
    ShapesListOpt,
    TargetsArg,
    X64Opt,
    format_option,
)
from jitscope.errors import UsageError


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
    profile_html: Annotated[Path | None, typer.Option(help="Write the --profile report as HTML here.",
                                                      **FILE_OUT)] = None,
    compile_profile: Annotated[bool, typer.Option(
        "--compile-profile", help="Why the compile is slow: one more cold compile, traced and compiled under "
        "jax.profiler, split by XLA phase and by line of your code (the measured cold calls stay unprofiled; on "
        "a GPU the first one's compile is profiled, since only a program's first compile autotunes).")
    ] = False,
    fmt: Annotated[str | None, format_option(what=" (json: one versioned document; html: phase bars, "
                                             "distributions and scaling charts)")] = None,
    out: ReportOutOpt = None,
    save: Annotated[Path | None, typer.Option(help="Also write the JSON report to this file.", **FILE_OUT)] = None,
    compare: Annotated[Path | None, typer.Option(help="A saved report (--save) to compare with.")] = None,
    fail_if_slower: Annotated[str | None, typer.Option(
        help="With --compare: exit 1 if a cached-call median or compile time is this much slower, or the "
             "device memory XLA says the program needs this much larger, e.g. 10%.",
        show_default=False)] = None,
    x64: X64Opt = False,
    devices: DevicesOpt = None,
    mesh: MeshOpt = None,
    from_run: FromRunOpt = False,
    call: CallOpt = 1,
    keep_running: ContinueOpt = False,
    from_capture: FromCaptureOpt = None,
    compile_number: CompileOpt = 1,
    processes: Annotated[int | None, typer.Option(
        "--processes", help="Bench in N local CPU processes joined by jax.distributed (gloo collectives), on a mesh "
        "spanning all their devices (--devices/--mesh: the whole mesh's), each timing the same calls in lockstep; "
        "shows each process's figures side by side, the skew and the straggler. --save FILE.json writes one report "
        "per process (FILE.p0.json ...) for jitscope merge.", show_default=False)] = None,
    distributed: DistributedOpt = False,
) -> None:
    """Time TARGET's cold first call (trace, lower, compile, first run) and its cached calls."""
    from jitscope.api.commands.bench import bench_command
    from jitscope.api.targets import TargetFlags
    from jitscope.stdout import document_owns_stdout
    from jitscope.timing.runner import BenchOptions

    fmt_name = format_of(fmt, out)
    document_owns_stdout(fmt_name != "text" and out is None)  # the user's output, even later, to stderr
    check_distributed(distributed, processes)
    if distributed and compare is not None:
        raise UsageError("--distributed cannot be combined with --compare yet",
                         hint="compare one process's report: jitscope bench ... --compare FILE.p0.json")
    if fail_if_slower is not None and compare is None:
        raise UsageError("--fail-if-slower needs --compare BASELINE.json")
    check_bench(budget, min_rounds, cold_runs, max_warmup, cli=True)
    options = BenchOptions(budget=budget, min_rounds=min_rounds, cold_runs=cold_runs, cold_process=cold_process,
                           eager=eager, dispatch=dispatch, profile=profile or profile_html is not None, seed=seed,
                           persistent_cache=persistent_cache, max_warmup=max_warmup, compile_profile=compile_profile)
    flags = TargetFlags(targets, shapes, static, arg, x64, devices, mesh, from_run, call, keep_running, from_capture,
                        compile_number)
    if processes is not None:
        from jitscope.api.commands.bench import bench_processes_command

        if compare is not None:
            raise UsageError("--processes cannot be combined with --compare yet",
                             hint="compare one process's report: jitscope bench ... --compare FILE.p0.json")
        code = bench_processes_command(flags, options, processes, fmt_name, out, save=save)
        if code:
            raise typer.Exit(code)
        return
    code = bench_command(flags, options, fmt_name, out, save=save, compare=compare, fail_if_slower=fail_if_slower,
                         profile_html=profile_html, distributed=distributed)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("bench", no_args_is_help=True)(bench)
