"""``jitscope run``'s report as a view model, on a hand-built ``RunRecord``: exact Markdown, the timeline as
data and as SVG, and the text list."""

from __future__ import annotations

import re

from jitscope.model.common import Location
from jitscope.model.effects import EffectKind, EffectRecord
from jitscope.model.keys import KeyDiff
from jitscope.model.run import JAX_INTERNAL, CompileEvent, RunRecord
from jitscope.report.views.document import Chart
from jitscope.report.views.run import run_document, timeline_chart
from jitscope.report.writers.html import render_html
from jitscope.report.writers.markdown import render_markdown
from jitscope.report.writers.svg import _label_rows, nice_step
from jitscope.report.writers.terminal import render_plain
from jitscope.run.summary import summarize
from tests.report.test_backends import check_html

STEP = Location("train.py", 10, "step")
LOSS = Location("train.py", 20, "loss")
PRINT = EffectRecord(EffectKind.PRINT, "print()", Location("train.py", 12, "step"))


def _event(index: int, function: str, number: int, at_s: float, **kw: object) -> CompileEvent:
    defaults: dict[str, object] = {"defined_at": STEP if function == "step" else LOSS,
                                   "call_site": Location("train.py", 30 + index, "main"), "traced": True,
                                   "compiled": True, "trace_s": 0.01, "lower_s": 0.005, "compile_s": 0.1}
    defaults.update(kw)
    return CompileEvent(index, function, number=number, at_s=at_s, **defaults)  # type: ignore[arg-type]


EVENTS = (
    _event(1, "convert_element_type", 1, 0.2, kind=JAX_INTERNAL, defined_at=None, call_site=None, trace_s=0.0,
           lower_s=0.002, compile_s=0.02),
    _event(2, "step", 1, 0.5, signature="x: f32[64,16], lr: ~f32[]", effects=(PRINT,)),
    _event(3, "step", 2, 1.0, signature="x: f32[8,16], lr: ~f32[]", nearest=(1,),
           causes=(KeyDiff("x: shape", "(64, 16)", "(8, 16)"), KeyDiff("y: shape", "(64,)", "(8,)")), effects=(PRINT,)),
    _event(4, "step", 3, 1.5, signature="x: f32[8,16], lr: f32[]", nearest=(1, 2),
           causes=(KeyDiff("lr: weak_type", "True", "False"),)),
    _event(5, "loss", 1, 1.8, signature="p: dict of 2 leaves", trace_s=0.02, lower_s=0.0, compile_s=0.05),
    _event(6, "loss", 2, 2.0, signature="p: dict of 2 leaves", same_key_as=1, error="TypeError: bad"),
)
RECORD = RunRecord(program="train.py", argv=("--epochs", "2"), exit_code=0, outcome="exited 0", wall_s=2.5,
                   events=EVENTS, functions=summarize(EVENTS), gate_failures=("step compiled 3 times (--max-compiles 2)",),
                   notes=("not hooked on this JAX: backend_compile",), jax_version="0.4.38")

MARKDOWN = """\
# jitscope run: train.py

train.py exited 0 after 2.5 s; 5 compiles of 2 jitted functions (3 recompiles), 552 ms tracing and compiling = 22% of wall time

|   |   |
| --- | ---: |
| program | train.py --epochs 2 |
| outcome | exited 0 |
| exit code | 0 |
| wall time | 2.5 s |
| jitted functions | 2 |
| compiles | 5 |
| recompiles | 3 |
| tracing and compiling | 552 ms |
| share of wall time | 22% |
| internal compiles | 1 in 22 ms |

> **gate failed:** step compiled 3 times (--max-compiles 2)

> **note:** not hooked on this JAX: backend_compile

**compile timeline (seconds since the program started)**

| at | function | trace | lower | compile |   |
| ---: | --- | ---: | ---: | ---: | --- |
| 385 ms | step | 10 ms | 5 ms | 100 ms | compile 1 |
| 885 ms | step | 10 ms | 5 ms | 100 ms | compile 2: x: shape, y: shape |
| 1.39 s | step | 10 ms | 5 ms | 100 ms | compile 3: lr: weak_type |
| 1.73 s | loss | 20 ms |   | 50 ms | compile 1 |
| 1.89 s | loss | 10 ms | 5 ms | 100 ms | compile 2: same key as 1 |

## functions — *worst first; share: of the wall time*

| function | defined at | compiles | trace | lower | compile | total | share |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |
| step | train.py:10 | 3 | 30 ms | 15 ms | 300 ms | 345 ms | 14% |
| loss | train.py:20 | 2 | 30 ms | 5 ms | 150 ms | 185 ms | 7% |

## step: 2 recompiles — *defined at train.py:10*

compile 1 from train.py:32 at 385 ms: x: f32[64,16], lr: ~f32[]

| compile | at | called from | what changed | before | after | vs compile |
| ---: | ---: | --- | --- | --- | --- | --- |
| 2 | 885 ms | train.py:33 | x: shape | (64, 16) | (8, 16) | 1 |
|   |   |   | y: shape | (64,) | (8,) |   |
| 3 | 1.39 s | train.py:34 | lr: weak_type | True | False | 1, 2 (equally near) |

> **hint:** lr: weak_type: a Python scalar one time, an array the other

## loss: 1 recompile — *defined at train.py:20*

compile 1 from train.py:35 at 1.73 s: p: dict of 2 leaves

| compile | at | called from | what changed | before | after | vs compile |
| ---: | ---: | --- | --- | --- | --- | --- |
| 2 | 1.89 s | train.py:36 | nothing (same cache key) |   |   | 1 |

> **hint:** same cache key as an earlier compile: JAX dropped that entry (cache cleared, the jitted object was garbage-collected, or a key part jitscope cannot see)

> **error:** compile 2: tracing raised TypeError: bad

## trace-time side effects — *they run once per trace, never in the compiled program*

| traced function | effect | at | traces | instead |
| --- | --- | --- | ---: | --- |
| step | print() | train.py:12 | 2 | use jax.debug.print |

<details><summary>internal compiles</summary>

| function | kind | traces | compiles | time |
| --- | --- | ---: | ---: | ---: |
| convert_element_type | jax-internal | 1 | 1 | 22 ms |

</details>

<sub>jax 0.4.38, run schema 1.4</sub>
"""


def test_markdown_report_reads_exactly() -> None:
    assert render_markdown(run_document(RECORD)) == MARKDOWN


def test_the_timeline_is_data_one_lane_per_function_and_one_for_internal_compiles() -> None:
    chart = timeline_chart(RECORD)
    assert chart.kind == "timeline" and chart.x_range == (0.0, 2.5)
    assert chart.categories == ("step", "loss", "internal compiles")
    assert [s.name for s in chart.series] == ["trace", "lower", "compile"]
    spans = [(s.lane, round(s.start, 3), s.lengths, s.label, s.mark, s.quiet) for s in chart.spans]
    assert spans == [
        (0, 0.385, (0.01, 0.005, 0.1), "compile 1", False, False),
        (0, 0.885, (0.01, 0.005, 0.1), "compile 2: x: shape, y: shape", True, False),
        (0, 1.385, (0.01, 0.005, 0.1), "compile 3: lr: weak_type", True, False),
        (1, 1.73, (0.02, 0.0, 0.05), "compile 1", False, False),
        (1, 1.885, (0.01, 0.005, 0.1), "compile 2: same key as 1", True, False),
        (2, 0.178, (0.0, 0.002, 0.02), "", False, True),
    ]
    assert chart.spans[2].title == ("compile 3 from train.py:34: lr: weak_type True -> False "
                                    "(vs compile 1; compiles 1, 2 are equally near)")


def test_html_draws_the_timeline_as_inline_svg() -> None:
    html = render_html(run_document(RECORD))
    check_html(html)
    svg = re.search(r'<svg class="chart"[^>]*aria-label="compile timeline.*?</svg>', html, re.DOTALL)
    assert svg is not None
    body = svg.group()
    assert body.count('<g class="span mark">') == 3 and body.count('<rect class="re"') == 4  # 3 + the legend
    assert body.count('<g class="span">') == 3
    assert "<title>compile 2 from train.py:33: x: shape (64, 16) -&gt; (8, 16); y: shape (64,) -&gt; (8,) " \
           "(vs compile 1)\ntrace 10 ms, lower 5 ms, compile 100 ms</title>" in body
    assert '>compile 3: lr: weak_type</text>' in body
    assert [t for t in re.findall(r'text-anchor="middle">([^<]*)</text>', body)] == [
        "0", "500 ms", "1 s", "1.5 s", "2 s", "2.5 s"]
    assert 'class="report-run"' in html and "<h3>step: 2 recompiles" in html


def test_text_lists_the_timeline() -> None:
    text = render_plain(run_document(RECORD), width=120)
    lines = [line.rstrip() for line in text.splitlines()]
    start = lines.index("compile timeline (seconds since the program started)")
    assert lines[start + 1:start + 4] == [
        "    at  function  trace  lower  compile",
        "385 ms  step      10 ms   5 ms   100 ms  compile 1",
        "885 ms  step      10 ms   5 ms   100 ms  compile 2: x: shape, y: shape",
    ]


def test_the_exit_summary_is_the_same_view_in_a_few_lines() -> None:
    """What ``jitscope run`` prints on stderr at exit: the headline, the functions, each recompile's causes."""
    lines = [line.rstrip() for line in render_plain(run_document(RECORD, layout="summary"), width=200).splitlines()]
    assert lines[0].startswith("jitscope run: train.py exited 0 after 2.5 s; ")
    assert lines[1].split() == ["function", "defined", "at", "compiles", "trace", "lower", "compile", "share"]
    assert "step: 2 recompiles, because:" in lines
    assert not any(line.startswith("jitscope run: train.py ━") for line in lines)  # no title rule: one headline


def test_labels_never_overlap_nor_leave_the_chart() -> None:
    placed = _label_rows([(200.0, "compile 1"), (210.0, "compile 2: x"), (300.0, "c3"), (860.0, "compile 9")], 876)
    assert [row for row, _ in placed] == [0, 1, 0, 0]
    assert placed[3][1] == 876 - (6.2 * 9 + 6)
    assert _label_rows([(200.0, "")], 876) == [(-1, 200.0)]
    many = _label_rows([(200.0 + i, f"label {i}") for i in range(6)], 876)
    assert [row for row, _ in many] == [0, 1, 2, 3, -1, -1]  # four rows at most; the rest are in the tooltips


def test_nice_steps() -> None:
    assert [nice_step(s) for s in (2.5, 4.45, 60.0, 0.003)] == [0.5, 1.0, 10.0, 0.0005]


def test_an_empty_run_has_no_timeline() -> None:
    record = RunRecord("p.py", (), 0, "exited 0", 0.1, (), (), notes=("the program never imported jax",))
    document = run_document(record)
    assert not any(isinstance(b, Chart) for b in document.blocks)
    assert "no JAX traces or compiles were seen" in render_markdown(document)


def test_a_phase_too_thin_to_draw_is_left_out_and_a_short_span_still_shows() -> None:
    from jitscope.report.views.document import Series, Span
    from jitscope.report.writers.svg import timeline

    chart = Chart("timeline", "t", (Series("trace", ()), Series("compile", ())), categories=("f",), x_unit="seconds",
                  spans=(Span(0, 10.0, (1e-6, 0.1)), Span(0, 50.0, (0.0, 0.0))), x_range=(0.0, 100.0))
    svg = timeline(chart)
    spans = "".join(re.findall(r'<g class="span">.*?</g>', svg, re.DOTALL))
    widths = re.findall(r'<rect class="c(\d)" x="[\d.]+" y="\d+" width="([\d.]+)"', spans)
    assert widths == [("1", "2.0"), ("0", "2.0")]  # 0.1 s of 100 s is under 2 px: widened; 1 µs dropped
