"""Profiles of tests/profile/targets.py, taken once per session (a profile costs about a second)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.model.profile import ProfileReport

TARGETS = Path(__file__).with_name("targets.py")


@pytest.fixture(scope="session")
def profiled() -> ProfileReport:
    """hotspot, nested and scanned, profiled (few calls, short timing: the tests check attribution, not speed)."""
    from jitscope.bench.plan import plan_calls
    from jitscope.profiling.runner import ProfileOptions, profile_calls

    calls = plan_calls([f"{TARGETS}:hotspot", f"{TARGETS}:nested", f"{TARGETS}:scanned"])
    return profile_calls(calls, ProfileOptions(calls=3, budget=0.05))
