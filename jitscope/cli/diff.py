"""``jitscope diff``: what a change did to the compiled program (jaxpr, HLO, cost, memory, compile time)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jitscope.cli.options import (
    ArgOpt,
    CompileOpt,
    DevicesOpt,
    FromCaptureOpt,
    MeshOpt,
    ReportFormat,
    ShapesOpt,
    StaticOpt,
    X64Opt,
    format_option,
)
from jitscope.errors import UsageError, UserCodeError
from jitscope.report.formats import resolve_format
from jitscope.report.writers.destination import write_result

if TYPE_CHECKING:
    from collections.abc import Iterable

    from jitscope.comparison.sides import Side
    from jitscope.comparison.sources import SourceTree
    from jitscope.model.diff import BenchComparison, DiffReport
    from jitscope.model.trace import TraceReport


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
        show_default=False)] = None,
    fmt: Annotated[ReportFormat | None, format_option(what=" (markdown: sized for a pull-request comment; html: "
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
        "--bench-rounds", min=2, help="Rounds of A B for --bench.")] = 3,
    bench_budget: Annotated[float, typer.Option(
        "--bench-budget", help="Seconds of timed calls per side per round, for --bench.")] = 0.3,
    memory: Annotated[bool, typer.Option(
        "--memory", help="Also compare memory at the peak by line: jitscope memory of each side (one more compile "
        "each, with XLA's dump); the peak figure and --fail-on 'peak>+5%' then read the exact peak.")] = False,
) -> None:
    """Compare two versions of a jitted function: lines of your code whose equations changed, primitive
    counts, optimised-HLO instructions and collectives added or removed, FLOPs, bytes, memory and compile
    time."""
    from jitscope.comparison.gate import parse_rules

    rules = parse_rules(fail_on) if fail_on is not None else ()
    fmt_name = resolve_format(fmt, out)
    if bench:
        from jitscope.cli.options import check_count, check_seconds

        check_count("--bench-rounds", bench_rounds, limit=100)
        check_seconds("--bench-budget", bench_budget)
    flags = _trace_flags(shapes, static, arg, x64, devices, mesh, from_capture, compile_number)
    timing = (bench_rounds, bench_budget) if bench else None
    record, sides = compare(targets, base, base_env, flags, timing, memory)
    if rules:
        import dataclasses

        from jitscope.comparison.gate import check

        record = dataclasses.replace(record, gates=check(rules, record.calls))
    from jitscope.api.commands.diff import DiffResult

    write_result(DiffResult(record, sides=sides), fmt_name, out)
    _exit_status(record)


def _trace_flags(shapes: list[str] | None, static: list[str] | None, arg: list[str] | None, x64: bool,
                 devices: int | None, mesh: str | None, from_capture: Path | None, compile_number: int) -> list[str]:
    """The options both sides' ``jitscope trace`` get (paths made absolute: the sides run elsewhere)."""
    flags: list[str] = []
    for name, values in (("--shapes", shapes), ("--static", static), ("--arg", arg)):
        for value in values or ():
            flags += [name, value]
    if x64:
        flags.append("--x64")
    if devices is not None:
        flags += ["--devices", str(devices)]
    if mesh is not None:
        flags += ["--mesh", mesh]
    if from_capture is not None:
        if not from_capture.is_dir():
            raise UsageError(f"--from {from_capture}: no such folder", hint="a folder written by jitscope run --capture")
        flags += ["--from", str(from_capture.resolve()), "--compile", str(compile_number)]
    elif compile_number != 1:
        raise UsageError("--compile needs --from DIR")
    return flags


def compare(targets: list[str], base: str | None, base_env: str | None, flags: list[str],
            timing: tuple[int, float] | None = None,
            memory: bool = False) -> tuple[DiffReport, tuple[TraceReport, TraceReport]]:
    """Trace both sides (each in a process of its own) and compare them."""
    from jitscope.comparison.sides import Side, side_in_tree, worktree

    cwd = Path.cwd()
    python = _python(base_env) if base_env else sys.executable
    if len(targets) > 2:
        raise UsageError(f"jitscope diff takes one or two targets, not {len(targets)}",
                         hint="OLD_TARGET NEW_TARGET, or TARGET --base REV")
    if len(targets) == 2:
        if base is not None:
            raise UsageError("--base compares one TARGET with itself at REV: give one target, or drop --base")
        return _run(Side(f"old ({targets[0]})", targets[0], cwd, python, cwd),
                    Side(f"new ({targets[1]})", targets[1], cwd, sys.executable, cwd), targets[0], targets[1], flags,
                    timing, memory)
    if base is None:
        if base_env is None:
            raise UsageError("jitscope diff needs something to compare TARGET with",
                             hint="give OLD_TARGET NEW_TARGET, or TARGET --base REV, or TARGET --base-env PYTHON")
        return _run(Side(f"old ({base_env})", targets[0], cwd, python, cwd),
                    Side("new (this environment)", targets[0], cwd, sys.executable, cwd), base_env,
                    "this environment", flags, timing, memory)
    with worktree(base, cwd) as (tree, top, commit):
        target, where = side_in_tree(targets[0], cwd, top, tree)
        label = base if commit.startswith(base) else f"{base} ({commit[:9]})"
        env = f" under {base_env}" if base_env else ""
        return _run(Side(f"base {label}{env}", target, where, python, tree),
                    Side("working tree", targets[0], cwd, sys.executable, top), label + env, "working tree", flags,
                    timing, memory)


def _run(old: Side, new: Side, old_label: str, new_label: str, flags: list[str],
         timing: tuple[int, float] | None = None,
         memory: bool = False) -> tuple[DiffReport, tuple[TraceReport, TraceReport]]:
    """Old side, then new side (one at a time, so neither compile competes with the other), then the diff.
    The old side's sources are read while its files exist (a worktree goes away after). ``memory``: each
    side's ``jitscope memory`` too (``comparison/memory.py``)."""
    from jitscope.comparison.compare import diff_reports
    from jitscope.comparison.memory import measure, memory_files
    from jitscope.comparison.sides import trace_side
    from jitscope.report.writers.console import make_console

    console = make_console(stderr=True)
    reports = []
    for side in (old, new):
        with console.status(f"tracing {side.label}") as status:
            report = trace_side(side, flags)
            if memory:
                status.update(f"memory of {side.label}")
            held = measure(side, flags) if memory else None
            reports.append((report, held, _sources(report, side.root, memory_files(held) if held else ())))
    (old_report, old_memory, old_sources), (new_report, new_memory, new_sources) = reports
    benches: tuple[BenchComparison, ...] = ()
    if timing is not None:
        from jitscope.comparison.timing import bench_sides

        rounds, budget = timing
        with console.status("timing both sides") as status:
            benches = bench_sides(old, new, [f for f in flags if f != "--no-effects"], rounds=rounds, budget=budget,
                                  progress=status.update)
    record = diff_reports(old_report, new_report, old_label=old_label, new_label=new_label,
                          old_sources=old_sources, new_sources=new_sources, benches=benches,
                          memories=(old_memory, new_memory) if old_memory is not None and new_memory is not None else None)
    return record, (old_report, new_report)


def _python(path: str) -> str:
    found = path if os.sep in path else (__import__("shutil").which(path) or path)
    return str(Path(found).expanduser().absolute())


def _exit_status(record: DiffReport) -> None:
    """After the report is out: exit 1 with one line if a side's code failed, or one line per gate crossed."""
    failed = [c for c in record.calls if c.failed]
    if failed:
        call = failed[0]
        side = call.old if call.old.failure else call.new
        where = f" at {side.failure_where}" if side.failure_where else ""
        raise UserCodeError(f"{side.label}: {side.target}({side.call}) failed while tracing{where}: {side.failure}",
                            hint="explained in the report on stdout")
    crossed = [g for g in record.gates if g.crossed]
    if crossed:
        for gate in crossed:
            print(f"error: {gate.message}", file=sys.stderr)
        raise typer.Exit(1)


def _sources(report: TraceReport, root: Path | None, extra: Iterable[str] = ()) -> SourceTree:
    from jitscope.comparison.sources import read_sources

    return read_sources(report, str(root) if root is not None else "", extra)


def register(app: typer.Typer) -> None:
    app.command("diff", no_args_is_help=True)(diff)
