"""The bench reports of every process of one ``bench --processes`` run, lined up call by call.

Each process timed the same calls in lockstep (``BenchOptions.lockstep_rounds``); per call, each
process's cached median and compile time are put side by side, with the skew (slowest / fastest)
and who is slowest. A skew is flagged when it is beyond the processes' own spread: for cached
calls, wider than the widest q3/q1 of any one process's rounds (so two processes whose rounds
overlap are not called different); for compiles, wider than any process's own spread across
``--cold-runs``, or, with one cold run each (no spread known), at least ``STRAGGLER_RATIO`` and
``STRAGGLER_MIN_S`` longer, as ``jitscope merge`` judges the compiles of ``jitscope run``.

Bad input is one line naming the file (exit 2): not a bench report, a single-process one, reports
of different runs (process count, coordinator), two claiming one process, a process missing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from jitscope.errors import UsageError
from jitscope.hosts.load import MAX_REPORT_BYTES, expand
from jitscope.hosts.merge import STRAGGLER_MIN_S, STRAGGLER_RATIO
from jitscope.model.bench import BENCH_KIND, BenchReport, BenchRow
from jitscope.model.common import from_jsonable
from jitscope.model.hosts import (
    SLOW,
    BenchFigures,
    BenchMergeReport,
    BenchProcess,
    BenchSkew,
    Finding,
    MergedBenchCall,
)
from jitscope.units import fmt_duration


def _read_json(path: str) -> object:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_REPORT_BYTES + 1)
        return json.loads(raw)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError):
        return None


def is_bench(paths: Sequence[str]) -> bool:
    """Whether the reports to merge are bench reports (the first JSON document that names a kind says)."""
    for path, _ in expand(paths):
        data = _read_json(path)
        if isinstance(data, dict) and "kind" in data:
            return data.get("kind") == BENCH_KIND
    return False


def load_bench_reports(paths: Sequence[str]) -> list[tuple[str, BenchReport]]:
    """Every process's bench report, by process index, checked to be one run's."""
    loaded: list[tuple[str, BenchReport]] = []
    for path, named in expand(paths):
        data = _read_json(path)
        if not isinstance(data, dict) or data.get("kind") != BENCH_KIND:
            if not named:
                continue
            kind = data.get("kind") if isinstance(data, dict) else None
            raise UsageError(f"{path}: not a jitscope bench report (kind {kind!r}), and the others are",
                             hint="merge the reports of one command: bench --processes N --save FILE.json wrote them")
        if not isinstance(data.get("process"), dict):
            raise UsageError(f"{path}: a single-process bench report (no process index)",
                             hint="jitscope bench TARGET --processes N --save FILE.json writes one per process")
        try:
            report = from_jsonable(BenchReport, data)
        except (TypeError, ValueError, KeyError) as exc:
            raise UsageError(f"{path}: a damaged bench report ({exc})") from None
        loaded.append((path, report))
    return _one_run(loaded)


def _one_run(loaded: list[tuple[str, BenchReport]]) -> list[tuple[str, BenchReport]]:
    first_path, first = loaded[0]
    assert first.process is not None
    by_index: dict[int, str] = {}
    for path, report in loaded:
        process = report.process
        assert process is not None
        if (process.count, process.coordinator) != (first.process.count, first.process.coordinator):
            raise UsageError(f"{path} is from another run (process {process.index} of {process.count} with "
                             f"coordinator {process.coordinator or '?'}, {first_path}: {first.process.count} "
                             f"with {first.process.coordinator or '?'})", hint="merge the reports of one run")
        if process.index in by_index:
            raise UsageError(f"{path} and {by_index[process.index]} both claim process {process.index}",
                             hint="they come from different runs, or one was copied: keep one")
        by_index[process.index] = path
    missing = [i for i in range(first.process.count) if i not in by_index]
    if missing:
        expected = first_path.replace(f".p{first.process.index}.", f".p{missing[0]}.")
        raise UsageError(f"no report for process {missing[0]} of {first.process.count} (expected {expected})")
    return sorted(loaded, key=lambda item: item[1].process.index if item[1].process else 0)


def merge_bench(loaded: Sequence[tuple[str, BenchReport]]) -> BenchMergeReport:
    """The merged report (``loaded`` sorted by process index, from ``load_bench_reports`` or a launch)."""
    processes = []
    rows: dict[tuple[str, str, str], dict[int, BenchRow]] = {}
    failed: dict[tuple[str, str, str], list[int]] = {}
    for path, report in loaded:
        process = report.process
        assert process is not None
        processes.append(BenchProcess(process.index, process.host, process.local_devices, path))
        for row in report.rows:
            rows.setdefault((row.target, row.call, row.label), {})[process.index] = row
        for failure in report.failures:
            failed.setdefault((failure.target, failure.call, failure.label), []).append(process.index)
    keys = [*rows, *(key for key in failed if key not in rows)]
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
            where = ", ".join(f"p{i}" for i in call.failed_on)
            out.append(Finding(SLOW, "bench-failed", f"{name} failed on {where} of {count} processes",
                               call.failed_on, call.target))
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


def per_process_path(save: Path, index: int) -> Path:
    """``bench.json`` -> ``bench.p1.json``: where ``--save`` puts process ``index``'s report."""
    suffix = save.suffix
    stem = save.name[: -len(suffix)] if suffix else save.name
    return save.with_name(f"{stem}.p{index}{suffix}")
