"""Memory reports of tests/memory/targets.py, compiled once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.model.memory import MemoryReport, MemoryRow

TARGETS = Path(__file__).with_name("targets.py")
NAMES = ("big_intermediate", "carried", "update", "donating_update", "grad_loss", "calls_helper")


@pytest.fixture(scope="session")
def report() -> MemoryReport:
    from jitscope.buffers.runner import memory_calls
    from jitscope.timing.plan import plan_calls

    return memory_calls(plan_calls([f"{TARGETS}:{name}" for name in NAMES]))


@pytest.fixture(scope="session")
def rows(report: MemoryReport) -> dict[str, MemoryRow]:
    assert not report.failures, report.failures
    return {row.target.rsplit(":", 1)[-1]: row for row in report.rows}
