"""The effect monitor on code whose bytecode differs between Python 3.11, 3.12 and 3.13.

Each case traces one function of ``tests/targets/effects_project/shapes.py`` with both
event sources that exist on the running Python and expects exactly the marked effects,
with the same lines, details and function names everywhere: comprehensions (frames on
3.11, inlined on 3.12+), generators resumed by ``next`` and ``throw``, a coroutine,
exceptions, slices and 3.13's fused loads, stores and ``CALL_KW``.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest

from jitscope.effects.monitor import Backend, watch_effects
from jitscope.model.effects import EffectKind, EffectsRecord

TARGETS = Path(__file__).resolve().parents[1] / "targets"
SHAPES = TARGETS / "effects_project" / "shapes.py"
F32 = jax.ShapeDtypeStruct((4,), jnp.float32)
K = EffectKind

BACKENDS = [
    pytest.param("profile", id="profile"),
    pytest.param(
        "monitoring",
        id="monitoring",
        marks=pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring needs Python 3.12+"),
    ),
]


@pytest.fixture
def shapes(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """A fresh copy of the module: its globals are mutated by the traced code."""
    monkeypatch.syspath_prepend(str(TARGETS))
    for name in [m for m in sys.modules if m == "effects_project" or m.startswith("effects_project.")]:
        monkeypatch.delitem(sys.modules, name)
    yield importlib.import_module("effects_project.shapes")


def marked_line(marker: str) -> int:
    pattern = re.compile(rf"# effect: {re.escape(marker)}(\s|$)")
    lines = SHAPES.read_text().splitlines()
    matches = [n for n, text in enumerate(lines, start=1) if pattern.search(text)]
    assert len(matches) == 1, f"marker {marker!r} must appear once in shapes.py"
    return matches[0]


def watch(fn: Any, *args: Any, backend: Backend) -> EffectsRecord:
    with watch_effects(fn.__code__, backend=backend) as watcher:
        jax.make_jaxpr(fn)(*args)
    return watcher.record()


#: (function, its arguments, [(kind, marker, detail, reporting function, count)]).
CASES: dict[str, tuple[tuple[Any, ...], list[tuple[EffectKind, str, str, str, int]]]] = {
    "multi_line_call": (
        (F32,),
        [
            (K.LOGGING, "multi-line-call", "logger.info()", "multi_line_call", 1),
            (K.GLOBAL_WRITE, "multi-line-store", "item assignment on global 'SETTINGS'", "multi_line_call", 1),
        ],
    ),
    "comprehensions": (
        (F32, {"w": F32}),
        [
            # Named after the function on 3.11 too, where the comprehension is a frame of its own.
            (K.GLOBAL_WRITE, "listcomp-append", "append() on global 'CALLS'", "comprehensions", 2),
            (K.PRINT, "setcomp-print", "print()", "comprehensions", 1),
            (K.GLOBAL_WRITE, "genexpr-append", "append() on global 'CALLS'", "<genexpr>", 2),
            (K.GLOBAL_WRITE, "walrus-global", "global 'LAST' assigned", "comprehensions", 1),
        ],
    ),
    "generators_and_coroutines": (
        (F32,),
        [
            (K.GLOBAL_WRITE, "gen-first", "item assignment on global 'SETTINGS'", "_fills", 1),
            (K.GLOBAL_WRITE, "gen-second", "append() on global 'CALLS'", "_fills", 1),
            (K.GLOBAL_WRITE, "async-item", "item assignment on global 'SETTINGS'", "_fills_async", 1),
        ],
    ),
    "generator_throw": (
        (F32,),
        [(K.GLOBAL_WRITE, "throw-item", "item assignment on global 'SETTINGS'", "_counts_throws", 1)],
    ),
    "exceptions": (
        (F32, {"w": F32}),
        [
            (K.ARGUMENT_MUTATION, "raise-item", "item assignment on argument 'params'", "_mutates_then_raises", 1),
            (K.PRINT, "except-print", "print()", "exceptions", 1),
            (K.GLOBAL_WRITE, "finally-append", "append() on global 'CALLS'", "exceptions", 1),
        ],
    ),
    "slices_and_in_place": (
        (F32, [F32, F32]),
        [
            (K.GLOBAL_WRITE, "global-slice", "item assignment on global 'CALLS'", "slices_and_in_place", 1),
            (K.ARGUMENT_MUTATION, "arg-slice-del", "item deletion on argument 'history'", "slices_and_in_place", 1),
            (K.GLOBAL_WRITE, "global-inplace", "in-place update on global 'SETTINGS'", "slices_and_in_place", 1),
            (K.GLOBAL_WRITE, "via-local", "item assignment on global 'REGISTRY'", "slices_and_in_place", 1),
            (K.LOGGING, "call-kw", "logger.warning()", "slices_and_in_place", 1),
        ],
    ),
    # A nested function rebinding a variable of the traced function changes nothing outside it.
    "local_closures_are_no_effect": ((F32,), []),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_effects_are_the_same_on_every_version(
    shapes: types.ModuleType, case: str, backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    args, expected = CASES[case]
    record = watch(getattr(shapes, case), *args, backend=backend)
    capsys.readouterr()
    found = {
        (e.kind, e.location.line, e.detail, e.location.function, e.count)
        for e in record.effects
        if Path(e.location.file).name == "shapes.py"
    }
    wanted = {(kind, marked_line(marker), detail, fn, count) for kind, marker, detail, fn, count in expected}
    assert found == wanted
    assert len(record.effects) == len(expected)
    assert record.body_runs == 1
    assert record.notes == ()


def test_every_marker_in_shapes_is_expected() -> None:
    markers = set(re.findall(r"# effect: (\S+)", SHAPES.read_text()))
    assert markers == {marker for _, expected in CASES.values() for _, marker, *_ in expected}
