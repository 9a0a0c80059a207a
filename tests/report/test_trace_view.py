"""The trace view model through the terminal back end, on fixed records: exact text."""

from __future__ import annotations

import io

from rich.console import Console

from jitscope.model.common import Location, from_jsonable, to_jsonable
from jitscope.model.trace import CostRecord, Diagnostic, MemoryRecord, SeenArg, TraceRecord
from jitscope.report.views import trace as view
from jitscope.report.writers.terminal import render_block
from jitscope.report.writers.theme import THEME


def render_trace(record: TraceRecord, **options: object):
    return render_block(view.trace_page(record, **options))  # type: ignore[arg-type]


def render_cost(cost: CostRecord | None):
    return render_block(view.cost_section(cost))


def render_memory(memory: MemoryRecord | None):
    return render_block(view.memory_section(memory))


def _text(renderable) -> str:
    console = Console(file=io.StringIO(), width=80, color_system=None, theme=THEME)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())


RECORD = TraceRecord(
    target="m.py:f",
    how="imported m.py",
    call="f32[2], threshold=0.0",
    static_argnames=("threshold",),
    seen=(
        SeenArg("x", "traced", "DynamicJaxprTracer", (2,), "f32"),
        SeenArg("s", "traced", "DynamicJaxprTracer", (), "f32", weak_type=True),
        SeenArg("threshold", "static", "float", value_repr="0.0"),
    ),
    body_runs=1,
    trace_seconds=0.0123,
    printed="hello\n",
    diagnostic=Diagnostic("bool_conversion", "TracerBoolConversionError: boom", Location("m.py", 3, "f"),
                          "use jnp.where", "    if x > 0:"),
)


def test_failed_trace_view():
    assert _text(render_trace(RECORD)) == """\
m.py:f ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━
call: f(f32[2], threshold=0.0)
jit options: static_argnames=('threshold',)

what the function saw  body ran once while tracing, 12.3 ms ────────────────────
argument   kind    seen as             value
x          traced  DynamicJaxprTracer  f32[2]
s          traced  DynamicJaxprTracer  ~f32[]
                                       weak-typed (from a Python scalar)
threshold  static  float               0.0

printed while tracing  runs once per trace, never in the compiled program ──────
  hello

tracing failed  bool conversion ────────────────────────────────────────────────
error: TracerBoolConversionError: boom
  --> m.py:3 in f
  3 | if x > 0:
  fix: use jnp.where"""


def test_cost_and_memory_tables_show_na():
    assert _text(render_cost(CostRecord(flops=2e9, bytes_accessed=1024.0))) == """\
cost analysis (XLA) ────────────────────────────────────────────────────────────
flops                              2 G
transcendentals                    n/a
bytes accessed                   1 KiB
arithmetic intensity  1.95 M flop/byte"""
    text = _text(render_memory(None))
    assert text.splitlines()[0].startswith("memory analysis (XLA)  the backend gives no memory analysis")
    assert text.count("n/a") == 6
    mem = MemoryRecord(argument_bytes=16, output_bytes=8, alias_bytes=8, temp_bytes=100, generated_code_bytes=0)
    assert mem.peak_bytes == 116
    assert "peak (args + outputs + temps - aliased)  116 B" in _text(render_memory(mem))


def test_trace_record_json_round_trip():
    assert from_jsonable(TraceRecord, to_jsonable(RECORD)) == RECORD


def test_cache_hit_is_one_line():
    from dataclasses import replace

    hit = replace(RECORD, call_index=3, cache_hit_of=1)
    assert _text(render_block(view.cache_hit_paragraph(hit))) == "call 3: cache hit (same key as call 1): f(f32[2], threshold=0.0)"
    assert _text(render_trace(replace(RECORD, call_index=2), numbered=True)).splitlines()[1] == (
        "call 2: f(f32[2], threshold=0.0)"
    )


def test_schema_1_0_trace_records_still_load():
    doc = to_jsonable(RECORD)
    del doc["call_index"], doc["cache_hit_of"]
    assert from_jsonable(TraceRecord, doc) == RECORD
