"""``jitscope.diff(old_fn, new_fn, *args)``: what a change did to the compiled program, from Python.

Both functions are traced, lowered and compiled in this process with the same arguments (abstract:
nothing allocated), and compared as ``jitscope diff OLD NEW`` compares two targets. The result renders
as every other result does (text, JSON, Markdown for a pull request, HTML with both sides' IR).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jitscope.api.results import Result

if TYPE_CHECKING:
    from jitscope.model.diff import CallDiff, DiffReport, GateResult
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
    import os

    from jitscope.api.commands.trace import run_trace
    from jitscope.api.targets import shape_list, target_of
    from jitscope.comparison.compare import diff_reports
    from jitscope.comparison.gate import check, parse_rules
    from jitscope.comparison.memory import memory_files
    from jitscope.comparison.sources import read_sources

    rules = parse_rules(fail_on) if fail_on else ()
    if bench:
        from jitscope.api.checks import check_count, check_seconds

        check_count("bench_rounds", bench_rounds, limit=100)
        if bench_rounds < 2:
            from jitscope.errors import UsageError

            raise UsageError(f"bench_rounds={bench_rounds}: at least 2 rounds are needed to tell a change from noise")
        check_seconds("bench_budget", bench_budget)
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
