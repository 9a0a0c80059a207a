"""``report.writers.run_plain.plain_summary`` prints what ``report.writers.run_live.render_summary`` prints on the piped console, or gives up."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest

from jitscope.model.common import Location
from jitscope.model.effects import EffectKind, EffectRecord
from jitscope.model.keys import KeyDiff
from jitscope.model.run import JAX_INTERNAL, LIBRARY, CompileEvent, RunRecord, SyncSite
from jitscope.report.writers.console import PIPE_WIDTH, make_console
from jitscope.report.writers.run_live import render_summary
from jitscope.report.writers.run_plain import PIPE_WIDTH as PLAIN_WIDTH
from jitscope.report.writers.run_plain import plain_summary
from jitscope.run.summary import summarize

STEP = Location("train.py", 10, "step")
PRINT = EffectRecord(EffectKind.PRINT, "print()", Location("train.py", 12, "step"))


def _event(index: int, function: str, number: int = 1, **kw: object) -> CompileEvent:
    defaults: dict[str, object] = {"defined_at": STEP, "call_site": Location("train.py", 30 + index, "main"),
                                   "traced": True, "compiled": True, "trace_s": 0.0123, "lower_s": 0.00456,
                                   "compile_s": 0.178}
    defaults.update(kw)
    return CompileEvent(index, function, number=number, **defaults)  # type: ignore[arg-type]


def _internal(index: int, name: str) -> CompileEvent:
    return _event(index, name, kind=JAX_INTERNAL, defined_at=None, call_site=None, trace_s=0.0, lower_s=0.0021,
                  compile_s=0.0000345 * index)


def _record(*events: CompileEvent, notes: tuple[str, ...] = (), wall_s: float = 1.68) -> RunRecord:
    return RunRecord(program="train.py", argv=(), exit_code=0, outcome="exited 0", wall_s=wall_s, events=events,
                     functions=summarize(events), notes=notes, jax_version="0.10.2")


def _rich(record: RunRecord) -> str:
    buffer = io.StringIO()  # not a terminal: the console jitscope run prints its summary on when piped
    make_console(file=buffer).print(render_summary(record))
    return buffer.getvalue()


INTERNAL = tuple(_internal(i, name) for i, name in enumerate(
    ("_normal", "_normal", "multiply", "broadcast_in_dim", "stage", "_threefry_seed", "convert_element_type",
     "add", "tanh"), start=10))

PLAIN = {
    "one function and internal compiles": _record(_event(1, "step"), *INTERNAL),
    "several functions, a library's, notes": _record(
        _event(1, "step"), _event(2, "Model.__call__.<locals>.inner", defined_at=Location("model/layers.py", 200)),
        _event(3, "apply", kind=LIBRARY, defined_at=Location("site-packages/optax/x.py", 3)),
        notes=("not hooked on this JAX: x", "the program never imported jax")),
    "trace-time side effects": _record(_event(1, "step", effects=(PRINT, replace(PRINT, count=3))),
                                       _event(2, "other", effects=(PRINT,), defined_at=Location("b.py", 1))),
    "no events": _record(notes=("the program never imported jax",)),
    "host-device syncs": replace(_record(_event(1, "step"), notes=("a note",)), syncs=(
        SyncSite(Location("train.py", 40, "main"), 100, 0.855, 0.127), SyncSite(Location("train.py", 44), 1, 0.2, 0.0))),
    "only internal compiles": _record(*INTERNAL[:2]),
    "a trace without a compile": _record(_event(1, "step", compiled=False, lower_s=0.0, compile_s=0.0)),
    "zero wall time": _record(_event(1, "step"), wall_s=0.0),
    "a long program path (the head line is not wrapped)": replace(_record(_event(1, "step")), program="p/" * 80),
}

RICH = {
    "a recompile": _record(_event(1, "step"), _event(2, "step", 2, causes=(KeyDiff("x: shape", "(8,)", "(9,)"),),
                                                     nearest=(1,))),
    "a table wider than the console": _record(_event(1, "f" * 60, defined_at=Location("d" * 40 + ".py", 1))),
    "a wide character": _record(_event(1, "步")),
    "a tab in a note": _record(_event(1, "step"), notes=("a\tb",)),
    "a newline in a note": _record(_event(1, "step"), notes=("a\nb",)),
}


def test_the_plain_width_is_the_piped_consoles() -> None:
    assert PLAIN_WIDTH == PIPE_WIDTH


@pytest.mark.parametrize("name", list(PLAIN))
def test_plain_summary_is_what_rich_prints(name: str) -> None:
    record = PLAIN[name]
    assert plain_summary(record) == _rich(record)


@pytest.mark.parametrize("name", list(RICH))
def test_plain_summary_leaves_the_rest_to_rich(name: str) -> None:
    assert plain_summary(RICH[name]) is None


def test_a_table_exactly_as_wide_as_the_console_is_plain() -> None:
    base = _record(_event(1, "f", defined_at=Location("d.py", 1)))
    lines = _rich(base).splitlines()
    room = PIPE_WIDTH - len(lines[1]) + len("function")  # the header row is as wide as the table
    wide = _record(_event(1, "f" * room, defined_at=Location("d.py", 1)))
    assert max(len(line) for line in _rich(wide).splitlines()[1:3]) == PIPE_WIDTH
    assert plain_summary(wide) == _rich(wide)
    wider = _record(_event(1, "f" * (room + 1), defined_at=Location("d.py", 1)))
    assert plain_summary(wider) is None
