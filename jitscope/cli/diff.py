"""``jitscope diff``: what a change did to the compiled program (jaxpr, HLO, cost, memory, compile time)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jitscope.api.checks import check_diff_bench, check_seconds, format_of
from jitscope.cli.options import (
    FILE_OUT,
    ArgOpt,
    CompileOpt,
    DevicesOpt,
    FromCaptureOpt,
    MeshOpt,
    ShapesOpt,
    StaticOpt,
    X64Opt,
    format_option,
)

#: Seconds each side's child process may take unless --timeout says otherwise.
SIDE_TIMEOUT_S = 900.0


def diff(
    targets: Annotated[list[str], typer.Argument(
        help="OLD_TARGET NEW_TARGET (two functions: path/to/file.py:fn or pkg.module:fn), or one TARGET with "
        "--base REV or --base-env PYTHON.", show_default=False, metavar="[OLD] TARGET")],
    base: Annotated[str | None, typer.Option(
        "--base", help="Compare TARGET in the working tree with TARGET at this git revision (checked out in a "
        "temporary worktree, removed after; your tree is not touched).", show_default=False)] = None,
    base_env: Annotated[str | None, typer.Option(
        "--base-env", help="Trace the old side with this Python (another venv, e.g. an older JAX); it needs "
        "jax, typer and rich.", show_default=False, metavar="PYTHON")] = None,
    shapes: ShapesOpt = None,
    static: StaticOpt = None,
    arg: ArgOpt = None,
    fail_on: Annotated[str | None, typer.Option(
        "--fail-on", help="CI gate: exit 1, one line per threshold crossed, e.g. "
        "'flops>+10%,peak>+5%,new-collective,compile-time>+20%'.", show_default=False)] = None,
    out: Annotated[Path | None, typer.Option(
        help="Write the report to FILE (.txt .json .md .html: the suffix picks the format).",
        show_default=False, **FILE_OUT)] = None,
    fmt: Annotated[str | None, format_option(what=" (markdown: sized for a pull-request comment; html: "
                                                      "both sides' IR side by side)")] = None,
    x64: X64Opt = False,
    devices: DevicesOpt = None,
    mesh: MeshOpt = None,
    from_capture: FromCaptureOpt = None,
    compile_number: CompileOpt = 1,
    bench: Annotated[bool, typer.Option(
        "--bench", help="Also time cached calls of both sides, alternating (A B A B, each a jitscope bench process "
        "of its own), with a verdict only beyond the noise; gate it with --fail-on 'runtime>+10%'.")] = False,
    bench_rounds: Annotated[int, typer.Option(
        "--bench-rounds", help="Rounds of A B for --bench (2 to 100).")] = 3,
    bench_budget: Annotated[float, typer.Option(
        "--bench-budget", help="Seconds of timed calls per side per round, for --bench.")] = 0.3,
    memory: Annotated[bool, typer.Option(
        "--memory", help="Also compare memory at the peak by line: jitscope memory of each side (one more compile "
        "each, with XLA's dump); the peak figure and --fail-on 'peak>+5%' then read the exact peak.")] = False,
    timeout: Annotated[float, typer.Option(
        "--timeout", help="Seconds each side's process may take (trace, memory, a bench round) before it "
        "is stopped, with everything it started, and diff fails; 0: no limit.")] = SIDE_TIMEOUT_S,
    compile_profile: Annotated[bool, typer.Option(
        "--compile-profile", help="Trace both sides with --compile-profile: the compile time's change by XLA "
        "phase and by line of your code (the HLO instructions per line are compared without it).")] = False,
) -> None:
    """Compare two versions of a jitted function: lines of your code whose equations changed, primitive
    counts, optimised-HLO instructions and collectives added or removed, FLOPs, bytes, memory and compile
    time."""
    from jitscope.api.commands.diff import diff_command, side_flags

    fmt_name = format_of(fmt, out)
    check_diff_bench(bench_rounds, bench_budget, cli=True)
    check_seconds("--timeout", timeout, zero_ok=True)
    timing = (bench_rounds, bench_budget) if bench else None
    flags = side_flags(shapes, static, arg, x64, devices, mesh, from_capture, compile_number)
    if compile_profile:
        from jitscope.api.commands.diff import COMPILE_PROFILE

        flags.append(COMPILE_PROFILE)
    if diff_command(targets, base, base_env, flags, fmt_name, out, fail_on=fail_on, timing=timing, memory=memory,
                    timeout=timeout or None):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("diff", no_args_is_help=True)(diff)
