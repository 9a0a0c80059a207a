"""``jitscope.diff(old_fn, new_fn, *args)``: what a change did to the compiled program, from Python.

Both functions are traced, lowered and compiled in this process with the same arguments (abstract:
nothing allocated), and compared as ``jitscope diff OLD NEW`` compares two targets. The result renders
as every other result does (text, JSON, Markdown for a pull request, HTML with both sides' IR).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jitscope.api.results import Result
from jitscope.errors import UsageError, UserCodeError

if TYPE_CHECKING:
    from jitscope.comparison.sides import Side
    from jitscope.comparison.sources import SourceTree
    from jitscope.model.diff import BenchComparison, CallDiff, DiffReport, GateResult
    from jitscope.model.trace import TraceReport
    from jitscope.report.views.document import Document

#: Rows per table in Markdown: a pull-request comment stays readable (the rest is counted).
MARKDOWN_ROWS = 25


class DiffResult(Result["DiffReport"]):
    """``jitscope.diff(...)`` / ``jitscope diff``: two versions of a function compared."""

    command = "diff"

    def __init__(self, record: DiffReport, *, sides: tuple[TraceReport, TraceReport] | None = None) -> None:
        super().__init__(record)
        #: The two trace reports compared (their IR is shown side by side in HTML); None when not kept.
        self.sides = sides

    @property
    def calls(self) -> tuple[CallDiff, ...]:
        return self.record.calls

    @property
    def changed(self) -> bool:
        """Anything but timings differs in any call."""
        return any(c.program_changed for c in self.record.calls)

    @property
    def crossed(self) -> tuple[GateResult, ...]:
        """The ``fail_on`` thresholds crossed."""
        return tuple(g for g in self.record.gates if g.crossed)

    def document(self, fmt: str) -> Document:
        from jitscope.report.views.diff import diff_document

        return diff_document(self.record, limit=MARKDOWN_ROWS if fmt == "markdown" else None,
                             sides=self.sides if fmt == "html" else None)

    def title(self) -> str:
        return f"jitscope diff: {self.record.old_label} -> {self.record.new_label}"

    def summary(self) -> str:
        from jitscope.report.views.diff import verdict
        from jitscope.report.views.document import plain

        if not self.record.calls:
            return "diff: no call traced on both sides"
        first = self.record.calls[0]
        return f"{first.target}({first.call}): {plain(verdict(first))}"


def diff(old_fn: Callable[..., Any], new_fn: Callable[..., Any], /, *args: Any,
         fail_on: str | None = None, static_argnums: int | tuple[int, ...] | None = None,
         static_argnames: str | tuple[str, ...] | None = None, shapes: str | None = None,
         memory: bool = False, bench: bool = False, bench_rounds: int = 3, bench_budget: float = 0.3,
         **kwargs: Any) -> DiffResult:
    """Trace ``old_fn(*args, **kwargs)`` and ``new_fn(*args, **kwargs)`` and compare what jit makes of them.

    ``memory``: also compile each once more with XLA's dump and compare the exact peak and the bytes live
    there by line (as ``jitscope diff --memory``). ``bench``: also time cached calls of both, alternating
    old, new, old, new ... ``bench_rounds`` times (in this process: unlike ``jitscope diff --bench``, whose
    sides each run in a process of their own), with a verdict only beyond the noise.

    >>> result = jitscope.diff(step_before, step_after, params, batch, fail_on="flops>+10%", memory=True)
    >>> result.changed, result.calls[0].metrics, result.calls[0].memory, result.crossed
    """
    from jitscope.api.commands.trace import run_trace
    from jitscope.api.targets import shape_list, target_of
    from jitscope.comparison.compare import diff_reports
    from jitscope.comparison.gate import check, parse_rules
    from jitscope.comparison.memory import memory_files
    from jitscope.comparison.sources import read_sources

    from jitscope.api.checks import check_callable, check_diff_bench, check_flag, check_text

    check_callable("old_fn", old_fn)
    check_callable("new_fn", new_fn)
    check_text("fail_on", fail_on)
    rules = parse_rules(fail_on, "fail_on") if fail_on is not None else ()
    check_flag("memory", memory)
    check_flag("bench", bench)
    check_diff_bench(bench_rounds, bench_budget, cli=False)
    reports, memories = [], []
    for fn in (old_fn, new_fn):
        handle = target_of(fn, args, kwargs, static_argnums, static_argnames, abstract=True, shapes=shapes)
        report, _ = run_trace([handle], shape_list(shapes), None, None, ("jaxpr", "stablehlo", "hlo", "cost",
                                                                          "memory"), False, False)
        reports.append(report)
        if memory:
            memories.append(_memory(handle, shapes))
    old, new = reports
    root = os.getcwd()
    extra = [memory_files(m) for m in memories] if memories else [set(), set()]
    benches = _bench(old_fn, new_fn, args, kwargs, static_argnums, static_argnames, shapes, bench_rounds,
                     bench_budget) if bench else ()
    record = diff_reports(old, new, old_label=_name(old_fn), new_label=_name(new_fn),
                          old_sources=read_sources(old, root, extra[0]), new_sources=read_sources(new, root, extra[1]),
                          benches=benches, memories=(memories[0], memories[1]) if memories else None)
    if rules:
        import dataclasses

        record = dataclasses.replace(record, gates=check(rules, record.calls))
    return DiffResult(record, sides=(old, new))


def _memory(handle: Any, shapes: str | None) -> Any:
    """``jitscope memory`` of one side, in this process (a MemoryReport)."""
    from jitscope.api.targets import shape_list
    from jitscope.buffers.runner import MemoryOptions, memory_calls
    from jitscope.load.mesh import example_mesh_scope
    from jitscope.timing.plan import plan_calls

    planned = plan_calls([handle], shape_list(shapes))
    with example_mesh_scope(argset for _, argset in planned):
        return memory_calls(planned, MemoryOptions())


def _bench(old_fn: Callable[..., Any], new_fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
           static_argnums: Any, static_argnames: Any, shapes: str | None, rounds: int,
           budget: float) -> tuple[Any, ...]:
    """Rounds of old, new, each a ``jitscope bench`` of cached calls; judged as ``jitscope diff --bench`` judges."""
    from jitscope.api.commands.bench import run_bench
    from jitscope.api.targets import shape_list, target_of
    from jitscope.comparison.timing import compare_timings
    from jitscope.timing.runner import BenchOptions

    handles = [target_of(fn, args, kwargs, static_argnums, static_argnames, abstract=False, shapes=shapes)
               for fn in (old_fn, new_fn)]
    options = BenchOptions(budget=budget, dispatch=False)
    per_side: list[list[Any]] = [[], []]
    for _ in range(rounds):
        for index, handle in enumerate(handles):
            result, _failed = run_bench([handle], shape_list(shapes), options=options)
            per_side[index].append(result.report)
    return compare_timings(per_side[0], per_side[1])


def _name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)


# -- jitscope diff on the command line: each side a child process (``comparison/sides.py``) ---------------------


def diff_command(targets: list[str], base: str | None, base_env: str | None, flags: list[str], fmt_name: str,
                 out: Path | None, *, fail_on: str | None = None, timing: tuple[int, float] | None = None,
                 memory: bool = False, timeout: float | None = None) -> bool:
    """``jitscope diff``: both sides traced (and measured), compared, gated and written; True when a
    ``fail_on`` threshold was crossed (a side whose code failed raises UserCodeError). ``timeout``: seconds
    each side's child process may take (None: no limit)."""
    import dataclasses

    from jitscope.comparison.gate import check, parse_rules
    from jitscope.report.writers.destination import write_result

    rules = parse_rules(fail_on, "--fail-on") if fail_on is not None else ()
    record, sides = compare(targets, base, base_env, flags, timing, memory, timeout)
    if rules:
        record = dataclasses.replace(record, gates=check(rules, record.calls))
    write_result(DiffResult(record, sides=sides), fmt_name, out)
    return _exit_status(record)


#: ``diff --compile-profile``: both sides traced with it (the compile by XLA phase and line, old against new).
COMPILE_PROFILE = "--compile-profile"


def side_flags(shapes: list[str] | None, static: list[str] | None, arg: list[str] | None, x64: bool,
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
            timing: tuple[int, float] | None = None, memory: bool = False,
            timeout: float | None = None) -> tuple[DiffReport, tuple[TraceReport, TraceReport]]:
    """Trace both sides (each in a process of its own, ``timeout`` seconds at most) and compare them."""
    from jitscope.comparison.sides import Side, side_in_tree, worktree

    cwd = Path.cwd()
    python = _python(base_env) if base_env else sys.executable
    if len(targets) > 2:
        raise UsageError(f"jitscope diff takes one or two targets, not {len(targets)}",
                         hint="OLD_TARGET NEW_TARGET, or TARGET --base REV")
    if len(targets) == 2:
        if base is not None:
            raise UsageError("--base compares one TARGET with itself at REV: give one target, or drop --base")
        return _run(Side(f"old ({targets[0]})", targets[0], cwd, python, cwd, timeout),
                    Side(f"new ({targets[1]})", targets[1], cwd, sys.executable, cwd, timeout), targets[0],
                    targets[1], flags, timing, memory)
    if base is None:
        if base_env is None:
            raise UsageError("jitscope diff needs something to compare TARGET with",
                             hint="give OLD_TARGET NEW_TARGET, or TARGET --base REV, or TARGET --base-env PYTHON")
        return _run(Side(f"old ({base_env})", targets[0], cwd, python, cwd, timeout),
                    Side("new (this environment)", targets[0], cwd, sys.executable, cwd, timeout), base_env,
                    "this environment", flags, timing, memory)
    with worktree(base, cwd) as (tree, top, commit):
        target, where = side_in_tree(targets[0], cwd, top, tree)
        label = base if commit.startswith(base) else f"{base} ({commit[:9]})"
        env = f" under {base_env}" if base_env else ""
        return _run(Side(f"base {label}{env}", target, where, python, tree, timeout),
                    Side("working tree", targets[0], cwd, sys.executable, top, timeout), label + env,
                    "working tree", flags, timing, memory)


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
            others = [f for f in flags if f != COMPILE_PROFILE]  # trace's own option
            if memory:
                status.update(f"memory of {side.label}")
            held = measure(side, others) if memory else None
            reports.append((report, held, _sources(report, side.root, memory_files(held) if held else ())))
    (old_report, old_memory, old_sources), (new_report, new_memory, new_sources) = reports
    benches: tuple[BenchComparison, ...] = ()
    if timing is not None:
        from jitscope.comparison.timing import bench_sides

        rounds, budget = timing
        with console.status("timing both sides") as status:
            benches = bench_sides(old, new, [f for f in flags if f not in ("--no-effects", COMPILE_PROFILE)],
                                  rounds=rounds, budget=budget,
                                  progress=status.update)
    record = diff_reports(old_report, new_report, old_label=old_label, new_label=new_label,
                          old_sources=old_sources, new_sources=new_sources, benches=benches,
                          memories=(old_memory, new_memory) if old_memory is not None and new_memory is not None else None)
    return record, (old_report, new_report)


def _python(path: str) -> str:
    found = path if os.sep in path else (__import__("shutil").which(path) or path)
    return str(Path(found).expanduser().absolute())


def _exit_status(record: DiffReport) -> bool:
    """After the report is out: a side's code failed (UserCodeError, exit 1), or True with one line per gate
    crossed on stderr."""
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
    return bool(crossed)


def _sources(report: TraceReport, root: Path | None, extra: Iterable[str] = ()) -> SourceTree:
    from jitscope.comparison.sources import read_sources

    return read_sources(report, str(root) if root is not None else "", extra)
