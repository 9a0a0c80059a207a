"""The bench reports of every process of one ``bench --processes`` run, lined up call by call.

Each process timed the same calls in lockstep (``BenchOptions.lockstep_rounds``); per call, each
process's cached median and compile time are put side by side, with the skew (slowest / fastest)
and who is slowest. A skew is flagged when it is beyond the processes' own spread: for cached
calls, wider than the widest q3/q1 of any one process's rounds (so two processes whose rounds
overlap are not called different); for compiles, wider than any process's own spread across
``--cold-runs``, or, with one cold run each (no spread known), at least ``STRAGGLER_RATIO`` and
``STRAGGLER_MIN_S`` longer, as ``jitscope merge`` judges the compiles of ``jitscope run``.

Bad input is one line naming the file (exit 2; ``hosts/reports.py``): not a bench report, a
single-process one, reports of different runs (process count, coordinator), two claiming one
process, a process missing.
"""

from __future__ import annotations

from collections.abc import Sequence

from jitscope.hosts.merge import STRAGGLER_MIN_S, STRAGGLER_RATIO, failed_finding
from jitscope.hosts.reports import group_calls, load_process_reports, per_process_path
from jitscope.model.bench import BENCH_KIND, BenchReport, BenchRow
from jitscope.model.hosts import (
    SLOW,
    BenchFigures,
    BenchMergeReport,
    BenchSkew,
    Finding,
    MergedBenchCall,
)
from jitscope.units import fmt_duration


def load_bench_reports(paths: Sequence[str]) -> list[tuple[str, BenchReport]]:
    """Every process's bench report, by process index, checked to be one run's."""
    return load_process_reports(paths, BenchReport, BENCH_KIND, "bench")


def merge_bench(loaded: Sequence[tuple[str, BenchReport]]) -> BenchMergeReport:
    """The merged report (``loaded`` sorted by process index, from ``load_bench_reports`` or a launch)."""
    processes, rows, failed, keys = group_calls(loaded)
    unique = [_merged_call(key, rows.get(key, {}), tuple(failed.get(key, ()))) for key in keys]
    count = loaded[0][1].process.count if loaded[0][1].process else len(loaded)
    return BenchMergeReport(process_count=count, processes=tuple(processes), calls=tuple(unique),
                            findings=tuple(_findings(unique, count)),
                            rounds=loaded[0][1].settings.lockstep_rounds)


def _merged_call(key: tuple[str, str, str], rows: dict[int, BenchRow], failed_on: tuple[int, ...]) -> MergedBenchCall:
    figures = tuple(_figures(index, rows[index]) for index in sorted(rows))
    return MergedBenchCall(target=key[0], call=key[1], label=key[2], figures=figures, cached=cached_skew(figures),
                           compile=compile_skew(figures), failed_on=failed_on)


def _figures(index: int, row: BenchRow) -> BenchFigures:
    blocked = row.cached.blocked
    compiles = [run.compile for run in row.cold.runs if run.compile is not None]
    spread = max(compiles) / min(compiles) if len(compiles) > 1 and min(compiles) > 0 else None
    return BenchFigures(process=index, cached_median_s=blocked.median, cached_q1_s=blocked.q1,
                        cached_q3_s=blocked.q3, rounds=blocked.rounds, cold_s=row.cold.median.total,
                        compile_s=row.cold.median.compile, compile_spread=spread)


def cached_skew(figures: Sequence[BenchFigures]) -> BenchSkew | None:
    """Slowest / fastest cached median, flagged beyond the widest q3/q1 of any process's own rounds."""
    timed = [f for f in figures if f.cached_median_s > 0]
    if len(timed) < 2:
        return None
    fastest = min(timed, key=lambda f: (f.cached_median_s, f.process))
    slowest = max(timed, key=lambda f: (f.cached_median_s, -f.process))
    ratio = slowest.cached_median_s / fastest.cached_median_s
    spread = max(f.cached_q3_s / f.cached_q1_s if f.cached_q1_s > 0 else 1.0 for f in timed)
    return BenchSkew(round(ratio, 4), fastest.process, slowest.process, round(spread, 4), ratio > spread)


def compile_skew(figures: Sequence[BenchFigures]) -> BenchSkew | None:
    """Slowest / fastest compile time, flagged beyond the processes' own spread across cold runs (or, unknown,
    at least STRAGGLER_RATIO and STRAGGLER_MIN_S longer)."""
    timed = [f for f in figures if f.compile_s]
    if len(timed) < 2:
        return None
    fastest = min(timed, key=lambda f: (f.compile_s or 0.0, f.process))
    slowest = max(timed, key=lambda f: (f.compile_s or 0.0, -f.process))
    low, high = fastest.compile_s or 0.0, slowest.compile_s or 0.0
    ratio = high / low
    spreads = [f.compile_spread for f in timed if f.compile_spread is not None]
    spread = max(spreads) if len(spreads) == len(timed) else None
    flagged = ratio > spread if spread is not None else ratio >= STRAGGLER_RATIO and high - low >= STRAGGLER_MIN_S
    return BenchSkew(round(ratio, 4), fastest.process, slowest.process,
                     round(spread, 4) if spread is not None else None, flagged)


def _findings(calls: Sequence[MergedBenchCall], count: int) -> list[Finding]:
    out: list[Finding] = []
    for call in calls:
        name = f"{call.target.rsplit(':', 1)[-1]}({call.call})"
        if call.failed_on:
            out.append(failed_finding("bench-failed", name, call.failed_on, count, call.target))
        by_process = {f.process: f for f in call.figures}
        if call.cached is not None and call.cached.flagged:
            s = call.cached
            slow, fast = by_process[s.slowest], by_process[s.fastest]
            out.append(Finding(SLOW, "bench-straggler",
                               f"p{s.slowest} is the straggler in {name}'s cached calls: median "
                               f"{fmt_duration(slow.cached_median_s)}, {s.ratio:.2f}x p{s.fastest}'s "
                               f"{fmt_duration(fast.cached_median_s)}, beyond the processes' own spread "
                               f"(rounds within {s.spread:.2f}x, q3/q1)", (s.slowest,), call.target))
        if call.compile is not None and call.compile.flagged:
            s = call.compile
            slow, fast = by_process[s.slowest], by_process[s.fastest]
            own = f"cold runs within {s.spread:.2f}x" if s.spread is not None else \
                f"one cold run each: at least {STRAGGLER_RATIO}x and {fmt_duration(STRAGGLER_MIN_S)} longer"
            out.append(Finding(SLOW, "compile-straggler",
                               f"p{s.slowest} is the straggler in {name}'s compile: "
                               f"{fmt_duration(slow.compile_s or 0.0)}, {s.ratio:.2f}x p{s.fastest}'s "
                               f"{fmt_duration(fast.compile_s or 0.0)} ({own})", (s.slowest,), call.target))
    return out


__all__ = ["cached_skew", "compile_skew", "load_bench_reports", "merge_bench", "per_process_path"]
