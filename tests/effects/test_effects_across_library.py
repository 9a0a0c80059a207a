"""The user's effects are still seen after every way control comes back from library code: a
return, an exception, a generator's yield, a callback into user code, print handed over. Both back
ends (a trace-time hook that gated its events on where control is would have to get all of these right)."""

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
