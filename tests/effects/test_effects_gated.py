"""The gated back end (Python 3.11's default, ``jitscope/effects/gated.py``): library code runs
without the profile hook, and the user's effects are still seen after every way control comes back
from it. Each case also runs under the always-on profile hook (and sys.monitoring on 3.12+)."""

from __future__ import annotations

import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest

from jitscope.effects.monitor import watch_effects
from jitscope.model.effects import EffectKind, EffectsRecord
from jitscope.userframes import default_is_user_file
from tests.effects.effect_targets import BACKENDS, TARGETS, import_fresh, marked_line

FILE = TARGETS / "effects_project" / "across_library.py"
F32 = jax.ShapeDtypeStruct((4,), jnp.float32)


def is_user_file(filename: str) -> bool:
    return Path(filename).name != "stand_in_library.py" and default_is_user_file(filename)


@pytest.fixture
def user(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    yield import_fresh(monkeypatch, "across_library")


def watch(fn: Any, backend: Any) -> EffectsRecord:
    with watch_effects(fn.__code__, is_user_file=is_user_file, backend=backend) as watcher:
        jax.make_jaxpr(fn)(F32)
    return watcher.record()


def test_library_code_runs_without_the_profile_hook(user: types.ModuleType) -> None:
    watch(user.looks_at_the_profiler, "gated")
    seen = user.lib.SEEN
    assert [where for where, _ in seen] == ["user", "library", "user", "library", "user"]
    assert all(hook is None for where, hook in seen if where == "library")
    assert all(hook is not None for where, hook in seen if where == "user")


CASES = [
    ("prints_after_library_raised", {"after-raise": "print()"}),
    ("prints_between_generator_steps", {"generator-loop": "print()"}),
    ("prints_around_a_callback", {"in-callback": "print()", "after-callback": "print()"}),
    ("prints_through_library", {"handed-to-library": "print() (called by library code)"}),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("function", "expected"), CASES, ids=[c[0] for c in CASES])
def test_effects_after_control_comes_back_from_library_code(
    user: types.ModuleType,
    backend: str,
    function: str,
    expected: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = watch(getattr(user, function), backend)
    found = {(e.location.line, e.detail) for e in record.effects if e.kind is EffectKind.PRINT}
    assert found == {(marked_line(FILE, marker), detail) for marker, detail in expected.items()}
    assert record.notes == ()
