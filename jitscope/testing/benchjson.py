"""``jit_bench`` results as a pytest-benchmark JSON document (``--jitscope-bench-json FILE``).

The layout is pytest-benchmark's own (``pytest --benchmark-json``, read by ``pytest-benchmark
compare`` and the tools built on it): ``machine_info``, ``commit_info``, ``benchmarks`` (each
with ``group``, ``name``, ``fullname``, ``params``, ``param``, ``extra_info``, ``options`` and
``stats``), ``datetime`` and ``version``. The statistics are those of the cached calls (the
blocked rounds ``jitscope bench`` reports), per call, with pytest-benchmark's meanings:
``data`` holds one per-call time per round, ``total`` is their sum and ``ops`` is
``rounds / total`` (1 / mean), ``iterations`` is the calls per round. Quartiles are
jitscope's (linear interpolation, as ``numpy.percentile``), which can differ from
pytest-benchmark's own method in the last digits for a handful of rounds. The cold first
call, which pytest-benchmark has no place for, is in ``extra_info``: ``first_call_s`` and its
``trace_s``, ``lower_s``, ``compile_s`` and ``first_run_s``. Pure: no jax, no pytest.
"""

from __future__ import annotations

import bisect
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jitscope.model.bench import BenchRow, TimingStats

#: The pytest-benchmark document version this layout follows (``version`` at the top).
PYTEST_BENCHMARK_FORMAT = "5.1.0"


def benchmark_stats(stats: TimingStats) -> dict[str, Any]:
    """pytest-benchmark's ``stats`` object for jitscope's per-call round samples."""
    data = list(stats.samples) or [stats.median]
    ordered = sorted(data)
    lo_fence, hi_fence = stats.q1 - 1.5 * stats.iqr, stats.q3 + 1.5 * stats.iqr
    # Tukey's lowest and highest datum still within 1.5 IQR of the quartiles, as pytest-benchmark defines them
    ld15iqr = ordered[min(bisect.bisect_left(ordered, lo_fence), len(ordered) - 1)]
    hd15iqr = ordered[max(bisect.bisect_right(ordered, hi_fence) - 1, 0)]
    total = sum(data)
    return {
        "min": stats.min, "max": stats.max, "mean": stats.mean, "stddev": stats.stddev, "rounds": stats.rounds,
        "median": stats.median, "iqr": stats.iqr, "q1": stats.q1, "q3": stats.q3,
        "iqr_outliers": stats.outliers_iqr, "stddev_outliers": stats.outliers_stddev,
        "outliers": f"{stats.outliers_stddev};{stats.outliers_iqr}", "ld15iqr": ld15iqr, "hd15iqr": hd15iqr,
        "ops": len(data) / total if total > 0 else 0, "total": total, "data": data, "iterations": stats.loops,
    }


def extra_info(row: BenchRow) -> dict[str, Any]:
    """What pytest-benchmark has no field for: the cold first call and the rest of jitscope's row."""
    cold, cached = row.cold.median, row.cached
    return {
        "function": row.target, "call": row.call,
        "first_call_s": cold.total, "trace_s": cold.trace, "lower_s": cold.lower, "compile_s": cold.compile,
        "first_run_s": cold.first_run, "unattributed_s": cold.unattributed, "compiles": cold.compiles,
        "cold_runs": len(row.cold.runs), "cold_in_calls": row.derived.cold_in_calls,
        "dispatch_median_s": cached.dispatch.median if cached.dispatch is not None else None,
        "steady_state": cached.steady_state.reached if cached.steady_state is not None else None,
        "unreliable": cached.blocked.unreliable, "flops_per_second": row.derived.flops_per_second,
        "warnings": list(row.warnings),
    }


def benchmark_entry(*, name: str, fullname: str, row: BenchRow, budget: float, min_rounds: int,
                    params: Mapping[str, Any] | None = None, param: str | None = None,
                    group: str | None = None) -> dict[str, Any]:
    """One element of the document's ``benchmarks``."""
    return {
        "group": group, "name": name, "fullname": fullname,
        "params": {k: _plain(v) for k, v in params.items()} if params else None, "param": param,
        "extra_info": extra_info(row),
        "options": {"disable_gc": True, "timer": "perf_counter", "min_rounds": min_rounds, "max_time": budget,
                    "min_time": None, "warmup": True},
        "stats": benchmark_stats(row.cached.blocked),
    }


def _plain(value: Any) -> Any:
    """Test parameters as JSON takes them: the value itself when it is plain, its repr otherwise."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def machine_info(jax_environment: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """pytest-benchmark's ``machine_info`` (without py-cpuinfo's details), and the JAX backend under ``jax``."""
    info: dict[str, Any] = {
        "node": platform.node(), "processor": platform.processor(), "machine": platform.machine(),
        "python_compiler": platform.python_compiler(), "python_implementation": platform.python_implementation(),
        "python_implementation_version": platform.python_version(), "python_version": platform.python_version(),
        "python_build": list(platform.python_build()), "release": platform.release(), "system": platform.system(),
        "cpu": {"arch": platform.machine(), "count": os.cpu_count()},
    }
    if jax_environment:
        info["jax"] = dict(jax_environment)
    return info


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=10).stdout.strip()


def commit_info(cwd: Path) -> dict[str, Any]:
    """pytest-benchmark's ``commit_info``: the git commit, its time, whether the tree is dirty, the branch."""
    info: dict[str, Any] = {"id": "unversioned", "time": None, "author_time": None, "dirty": False,
                            "project": cwd.name, "branch": "(unknown)"}
    try:
        _git("rev-parse", "--git-dir", cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return info
    try:
        info["id"] = _git("rev-parse", "HEAD", cwd=cwd)
        info["time"] = _git("show", "-s", "--pretty=format:%cI", cwd=cwd)
        info["author_time"] = _git("show", "-s", "--pretty=format:%aI", cwd=cwd)
        info["dirty"] = bool(_git("status", "--porcelain", "--untracked-files=no", cwd=cwd))
        branch = _git("rev-parse", "--abbrev-ref", "HEAD", cwd=cwd)
        info["branch"] = "(detached head)" if branch == "HEAD" else branch
    except (OSError, subprocess.SubprocessError) as exc:
        info["id"], info["error"] = "unknown", repr(exc)
    return info


def benchmark_document(entries: Sequence[Mapping[str, Any]], *, jax_environment: Mapping[str, Any] | None,
                       cwd: Path) -> dict[str, Any]:
    """The whole document, benchmarks in the order of their full names (xdist reports in any order)."""
    return {
        "machine_info": machine_info(jax_environment),
        "commit_info": commit_info(cwd),
        "benchmarks": sorted((dict(e) for e in entries), key=lambda e: str(e.get("fullname"))),
        "datetime": datetime.now(UTC).isoformat(),
        "version": PYTEST_BENCHMARK_FORMAT,
    }
