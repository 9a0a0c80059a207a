"""The by-line summary and the arguments table of the trace view, on fixed records: exact text."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console

from jitscope.model.common import Location, from_jsonable, to_jsonable
from jitscope.model.trace import ArgumentSummary, SeenArg, SourceLineRecord, TraceRecord
from jitscope.report.views import trace as view
from jitscope.report.views.trace_lines import lines_section
from jitscope.report.writers.terminal import render_block
from jitscope.report.writers.theme import THEME


def _text(renderable, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, theme=THEME)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())


def _line(n: int, eqns: int, library: int, flops: float | None, nbytes: float | None, primitives, calls=()):
    return SourceLineRecord(Location("/nowhere/gpt.py", n, "f"), eqns, library, primitives, calls, flops, nbytes)


LINES = (
    _line(21, 204, 202, 35e6, 3.5e6, (("mul", 52), ("reshape", 36), ("reduce_sum", 16), ("add", 3)),
          ("flax LayerNorm", "flax Linear", "jax gelu")),
    _line(20, 324, 322, 21.8e6, 5.5e6, (("reshape", 60), ("dot_general", 36)), ("flax MultiHeadAttention",)),
    _line(51, 1, 0, 0.0, 2326.0, (("slice", 1),)),
    SourceLineRecord(None, 21, 1, (("broadcast_in_dim", 8),), (), 0.0, 3e5),
)
RECORD = TraceRecord(target="gpt.py:train_step", how="", call="GPT(110,529 params, 432 KiB), i32[8,33]",
                     source_roots=("models",), source_lines=LINES)


def test_by_line_summary_fits_a_terminal():
    assert _text(render_block(lines_section(RECORD))) == """\
jaxpr by line of your code  your code: models; FLOPs, bytes: XLA's, by HLO source line ─────────────
line                eqns       FLOPs  share     bytes  primitives
gpt.py:21            204    35 MFLOP    62%  3.34 MiB  mul 52, reshape 36
gpt.py:20            324  21.8 MFLOP    38%  5.25 MiB  reshape 60, dot_general 36
gpt.py:51              1      0 FLOP     0%  2.27 KiB  slice 1
(no line of yours)    21      0 FLOP     0%   293 KiB  broadcast_in_dim 8"""


def test_by_line_summary_is_wide_where_there_is_room():
    text = _text(render_block(lines_section(RECORD)), width=200)
    header = text.splitlines()[1].split()
    assert header == ["line", "code", "eqns", "in", "libraries", "FLOPs", "share", "bytes", "calls", "into",
                      "primitives"]
    assert "flax LayerNorm, Linear; jax gelu" in text and "mul 52, reshape 36, reduce_sum 16 +1" in text


def test_uncompiled_summary_has_no_cost_columns():
    uncompiled = replace(RECORD, source_lines=tuple(replace(line, flops=None, bytes=None) for line in LINES))
    assert "FLOPs" not in _text(render_block(lines_section(uncompiled)))


def test_a_function_with_no_line_of_yours_is_said_to_be_library_code():
    """``jax.jit(jnp.sin)``: every equation is JAX's own; the note says so before suggesting a source setting."""
    record = replace(RECORD, source_lines=(SourceLineRecord(None, 1, 1, (("sin", 1),), (), 5.0, 40.0),))
    text = " ".join(_text(render_block(lines_section(record))).split())
    assert "no equation came from a line of your code: all were made in library code" in text
    assert "jax.jit(jnp.sin)" in text and "[tool.jitscope] source" in text


def test_arguments_with_many_leaves_are_one_row():
    seen = tuple(SeenArg(f"model.layers[{i}].w", "traced", "DynamicJaxprTracer", (4,), "f32") for i in range(8))
    seen += (SeenArg("batch", "traced", "DynamicJaxprTracer", (8, 33), "i32"),)
    record = replace(RECORD, seen=seen, arguments=(
        ArgumentSummary("model", "GPT", "GPT(32 params, 128 B)", traced=8, static=2, elements=32, nbytes=128),
        ArgumentSummary("batch", "ArraySpec", "i32[8,33]", traced=1, elements=264, nbytes=1056),
    ))
    assert _text(render_block(view.seen_section(record))).splitlines()[1:] == [
        "argument  kind    seen as             value",
        "model     traced  GPT                 GPT(32 params, 128 B): 8 traced leaves, 2 static",
        "batch     traced  DynamicJaxprTracer  i32[8,33]",
    ]


def test_schema_1_4_fields_round_trip_and_1_3_documents_load():
    assert from_jsonable(TraceRecord, to_jsonable(RECORD)) == RECORD
    old = to_jsonable(RECORD)
    del old["source_lines"], old["source_roots"], old["arguments"]
    assert from_jsonable(TraceRecord, old).source_lines == ()
