"""Shared helpers for the bench tests: record factories and the fixture project."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.model.bench import (
    BenchReport,
    BenchRow,
    BenchSettings,
    CachedRecord,
    ColdRecord,
    ColdRun,
    DerivedRecord,
)
from jitscope.timing.stats import summarize

BENCH_PROJECT = Path(__file__).resolve().parents[1] / "targets" / "bench_project"

SETTINGS = BenchSettings(
    budget=0.1, min_rounds=5, cold_runs=1, cold_process=False, eager=False, seed=0, persistent_cache="off",
    persistent_cache_source="default", clock="perf_counter", clock_resolution=5e-8, harness_overhead=4e-7,
)
ENV = {"jax": "0.10.2", "jaxlib": "0.10.2", "backend": "cpu", "device_kind": "cpu", "device_count": 1,
       "x64": False}


def row(target: str = "m.py:f", call: str = "f32[8]", *, median: float = 1e-5, compile: float | None = 0.02,
        input_bytes: int = 32, statics: dict[str, str] | None = None, total: float = 0.03) -> BenchRow:
    """A BenchRow with fixed, easily checked numbers."""
    cold = ColdRun(total=total, returned=total, trace=0.002, lower=0.004, compile=compile, first_run=0.001,
                   unattributed=0.003, compiles=1)
    stats = summarize([median * 0.98, median, median * 1.02], loops=100)
    return BenchRow(
        target=target, call=call, label="", statics=statics or {}, input_bytes=input_bytes,
        cold=ColdRecord((cold,), cold), cached=CachedRecord(stats, None, warmup_calls=3, output_leaves=1),
        derived=DerivedRecord(cold_in_calls=(total - median) / median, breakeven_calls=None,
                              flops_per_second=1e9, bytes_per_second=2e9),
    )


def report(*rows: BenchRow, env: dict[str, str] | None = None) -> BenchReport:
    return BenchReport(rows=tuple(rows), settings=SETTINGS, environment=dict(env or ENV))


@pytest.fixture
def make_row():
    return row


@pytest.fixture
def make_report():
    return report


@pytest.fixture
def bench_project() -> Path:
    return BENCH_PROJECT
