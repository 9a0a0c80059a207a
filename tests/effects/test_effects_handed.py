"""print called from C code for the user, reached in ways no profile event shows on Python 3.11
(and no CALL event's callable shows on 3.12+): a partial of print held in an instance, class or
module attribute or a dict item, made by a factory or by an alias of functools.partial, and print
handed to C callers other than map/filter (``sorted(key=print)``, ``functools.reduce``)."""

from __future__ import annotations

import types
from collections.abc import Iterator
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from jitscope.model.effects import EffectKind, EffectsRecord
from tests.effects.effect_targets import BACKENDS, TARGETS, import_fresh, marked_line, watch

FILE = TARGETS / "effects_project" / "handed.py"
F32 = jax.ShapeDtypeStruct((4,), jnp.float32)


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    yield import_fresh(monkeypatch, "handed")


def line_of(marker: str) -> int:
    return marked_line(FILE, marker)


def prints_at(record: EffectsRecord) -> set[int]:
    return {
        e.location.line
        for e in record.effects
        if e.kind is EffectKind.PRINT and Path(e.location.file).name == "handed.py"
    }


CASES = [
    ("print_through_attribute", ["attribute-partial"]),
    ("print_through_method", ["self-partial", "class-partial"]),
    ("print_through_item", ["item-partial"]),
    ("print_through_factory", ["factory-partial"]),
    ("print_through_renamed_partial", ["renamed-partial"]),
    ("print_as_sort_key", ["sort-key-print"]),
    ("print_through_reduce", ["reduce-print"]),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("function", "markers"), CASES, ids=[c[0] for c in CASES])
def test_print_handed_to_c_code_is_reported_at_the_user_line(
    handed: types.ModuleType,
    backend: str,
    function: str,
    markers: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = watch(getattr(handed, function), F32, backend=backend)
    assert prints_at(record) == {line_of(m) for m in markers}


@pytest.mark.parametrize("backend", BACKENDS)
def test_partials_and_c_callers_of_other_functions_are_not_effects(
    handed: types.ModuleType, backend: str
) -> None:
    assert watch(handed.pure_neighbours, F32, backend=backend).effects == ()
