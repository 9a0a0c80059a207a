"""Shared by the effect-monitor tests: import a module of tests/targets/effects_project afresh, find
the line a ``# effect: <marker>`` comment marks, and watch one function while JAX traces it."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import Any

import jax
import pytest

from jitscope.effects.monitor import watch_effects
from jitscope.effects.monitoring import monitoring_available
from jitscope.model.effects import EffectsRecord

TARGETS = Path(__file__).resolve().parents[1] / "targets"
BACKENDS = ["profile", *(["monitoring"] if monitoring_available() else [])]


def import_fresh(monkeypatch: pytest.MonkeyPatch, module: str) -> types.ModuleType:
    """``effects_project.<module>``, imported anew (its module-level state is fresh)."""
    monkeypatch.syspath_prepend(str(TARGETS))
    for name in [m for m in sys.modules if m == "effects_project" or m.startswith("effects_project.")]:
        monkeypatch.delitem(sys.modules, name)
    return importlib.import_module(f"effects_project.{module}")


def marked_line(file: Path, marker: str) -> int:
    lines = file.read_text().splitlines()
    (line,) = [n for n, text in enumerate(lines, 1) if text.rstrip().endswith(f"# effect: {marker}")]
    return line


def watch(fn: Any, *args: Any, backend: Any) -> EffectsRecord:
    with watch_effects(fn.__code__, backend=backend) as watcher:
        jax.make_jaxpr(fn)(*args)
    return watcher.record()
