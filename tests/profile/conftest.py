"""Profiles of tests/profile/targets.py, taken once per session (a profile costs about a second)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.model.profile import ProfileReport

TARGETS = Path(__file__).with_name("targets.py")


@pytest.fixture(scope="session")
def profiled() -> ProfileReport:
    """hotspot, nested and scanned, profiled (short timing: the tests check attribution, not speed).

    Eight profiled calls, not fewer: a thread descheduled for a few ms during a cheap thunk on a busy
    2-core CI machine must not outweigh the matmul in the per-call means the ranking tests read.
    """
    from jitscope.profiling.runner import ProfileOptions, profile_calls
    from jitscope.timing.plan import plan_calls

    calls = plan_calls([f"{TARGETS}:hotspot", f"{TARGETS}:nested", f"{TARGETS}:scanned"])
    return profile_calls(calls, ProfileOptions(calls=8, budget=0.05))
