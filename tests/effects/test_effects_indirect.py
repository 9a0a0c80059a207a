"""Trace-time effects the monitor sees although no user line calls the effect directly:
``setattr`` on pre-existing objects, ``functools.partial(print, ...)``, builtins handed to library
code (``jax.tree_util.tree_map(print, grads)``, ``map(print, xs)``). Both back ends."""

from __future__ import annotations

import types
from collections.abc import Iterator
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from jitscope.model.effects import EffectKind, EffectsRecord
from tests.effects.effect_targets import BACKENDS, TARGETS, import_fresh, marked_line, watch

FILE = TARGETS / "effects_project" / "indirect.py"
F32 = jax.ShapeDtypeStruct((4,), jnp.float32)


@pytest.fixture
def indirect(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    yield import_fresh(monkeypatch, "indirect")


def line_of(marker: str) -> int:
    return marked_line(FILE, marker)


def effects_at(record: EffectsRecord) -> set[tuple[EffectKind, int]]:
    return {(e.kind, e.location.line) for e in record.effects if Path(e.location.file).name == "indirect.py"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_setattr_on_pre_existing_objects(indirect: types.ModuleType, backend: str) -> None:
    record = watch(indirect.setattr_on_global, F32, backend=backend)
    assert effects_at(record) == {(EffectKind.GLOBAL_WRITE, line_of("setattr-global"))}
    assert record.effects[0].detail == "attribute assignment .h on global 'MODEL'"


@pytest.mark.parametrize("backend", BACKENDS)
def test_setattr_on_an_object_made_while_tracing_is_not_an_effect(
    indirect: types.ModuleType, backend: str
) -> None:
    assert watch(indirect.setattr_on_a_fresh_object, F32, backend=backend).effects == ()


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_called_by_library_code_is_reported_at_the_user_line(
    indirect: types.ModuleType, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record = watch(indirect.print_through_tree_map, F32, backend=backend)
    found = effects_at(record)
    assert (EffectKind.PRINT, line_of("tree-map-print")) in found
    assert (
        "float32[4]" in capsys.readouterr().out
    )  # print really ran (a tracer's repr differs by JAX version)


@pytest.mark.parametrize("backend", BACKENDS)
def test_host_callbacks_and_debug_print_are_not_effects(indirect: types.ModuleType, backend: str) -> None:
    assert watch(indirect.debug_print_is_not_an_effect, F32, backend=backend).effects == ()


@pytest.mark.parametrize("backend", BACKENDS)
def test_partial_of_print_and_map_of_print(
    indirect: types.ModuleType, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """C code calls print here (partial's and map's own call), with no profile event: sys.monitoring's
    CALL event shows the partial object or map's first argument; the profile hook finds the call site
    in the bytecode and checks it with line events."""
    record = watch(indirect.partial_print, F32, backend=backend)
    assert effects_at(record) == {(EffectKind.PRINT, line_of("partial-print"))}
    record = watch(indirect.print_through_map, F32, backend=backend)
    assert effects_at(record) == {(EffectKind.PRINT, line_of("map-print"))}
    record = watch(indirect.print_through_local_partial, F32, backend=backend)
    assert effects_at(record) == {(EffectKind.PRINT, line_of("local-partial-print"))}
    record = watch(indirect.print_through_filter_of_argument, F32, backend=backend)
    assert effects_at(record) == {(EffectKind.PRINT, line_of("filter-print"))}


@pytest.mark.parametrize("backend", BACKENDS)
def test_map_and_partial_of_other_functions_are_not_effects(indirect: types.ModuleType, backend: str) -> None:
    assert watch(indirect.map_and_partial_of_pure_functions, F32, backend=backend).effects == ()
