"""The bench view model on fixed records, printed by the terminal back end on a colourless console."""

from __future__ import annotations

import dataclasses
import io

from jitscope.model.bench import ScalingPoint, ScalingRecord
from jitscope.report.views.bench import bench_document, scaling_chart
from jitscope.report.writers.ascii_chart import LogLogChart
from jitscope.report.writers.console import plain_console
from jitscope.report.writers.terminal import render_rich
from jitscope.timing.compare import compare
from jitscope.timing.scaling import scaling_records


def render_bench(report):
    return render_rich(bench_document(report))


def ascii_chart(record, width, height):
    return LogLogChart(scaling_chart(record), width=width, height=height)


def text_of(renderable, width: int = 100) -> str:
    buf = io.StringIO()
    plain_console(buf, width=width).print(renderable)
    return buf.getvalue()


def test_report_tables(make_row, make_report):
    out = text_of(render_bench(make_report(make_row(call="f32[8]", median=1e-5, total=0.03))))
    lines = out.splitlines()
    assert lines[0].startswith("jitscope bench: m.py:f ━")
    assert lines[1].startswith("first call (cold)  fresh jit wrapper, JAX's in-memory caches cleared ─")
    cold = next(line for line in lines if line.startswith("f(f32[8])") and "30 ms" in line)
    assert cold.split() == ["f(f32[8])", "30", "ms", "2", "ms", "4", "ms", "20", "ms", "1", "ms", "3", "ms"]
    cached = next(line for line in lines if line.startswith("f(f32[8])") and "µs" in line and "ms" not in line)
    assert "10 µs" in cached and "3×100" in cached
    assert "2,999 calls" in out  # (30 ms - 10 us) / 10 us
    assert "1 GFLOP/s" in out
    flat = " ".join(out.split())
    assert "environment: jax 0.10.2, jaxlib 0.10.2, backend cpu, 1 x cpu" in flat
    assert "persistent cache off (default)" in flat


def test_unreliable_median_is_flagged_and_warnings_listed(make_row, make_report):
    r = make_row()
    stats = dataclasses.replace(r.cached.blocked, unreliable=True)
    r = dataclasses.replace(r, cached=dataclasses.replace(r.cached, blocked=stats), warnings=("spread too wide",))
    out = text_of(render_bench(make_report(r)))
    assert "10 µs !" in out
    assert "warning: f(f32[8]): spread too wide" in out


def test_comparison_section(make_row, make_report):
    current = make_report(make_row(median=2e-5))
    comp = compare(current, make_report(make_row(median=1e-5)), threshold=0.1, baseline_name="base.json")
    out = text_of(render_bench(dataclasses.replace(current, comparison=comp)))
    assert "compared with base.json  regression: more than 10% slower, or more memory ─" in out
    line = next(line for line in out.splitlines() if "cached median" in line)
    assert "+100.0%" in line and line.rstrip().endswith("regression")
    assert "1 regression(s)" in out


def test_scaling_chart_ascii_exact():
    record = ScalingRecord("m.py:f", "", (ScalingPoint("a", 10, 1e-6, 1e-2), ScalingPoint("b", 1000, 1e-4, 1e-2)),
                           run_slope=1.0, compile_slope=0.0)
    buf = io.StringIO()
    console = plain_console(buf, width=60)
    console.print(ascii_chart(record, width=20, height=5))
    got = [line.rstrip() for line in buf.getvalue().splitlines()]
    assert got == [
        "",
        "f: time against input size (log-log)",
        "    10 ms |▲                  ▲",
        "          |",
        "          |                   ●",
        "          |",
        "     1 µs |●",
        "          +--------------------",
        "           10 B          1000 B",
        "           ● cached call   ▲ XLA compile",
    ]


def test_scaling_chart_falls_back_to_ascii():
    record = ScalingRecord("m.py:f", "n=2", (ScalingPoint("a", 10, 1e-6, None), ScalingPoint("b", 100, 1e-5, None)),
                           run_slope=1.0, compile_slope=None)
    console = plain_console(io.StringIO(), width=60)
    options = console.options.copy()
    options.encoding = "ascii"
    lines = console.render_lines(ascii_chart(record, width=10, height=3), options, pad=False)
    text = [("".join(seg.text for seg in line)).rstrip() for line in lines]
    assert text[1] == "f [n=2]: time against input size (log-log)"
    assert text[2] == "    10 µs |" + " " * 15 + "o"  # charts are at least 16 columns wide
    assert text[-1] == "           o cached call"  # no compile times: no compile series in the legend


def test_scaling_section_in_report(make_row, make_report):
    rows = [make_row(call="f32[10]", input_bytes=40, median=1e-5), make_row(call="f32[1000]", input_bytes=4000,
                                                                             median=1e-3)]
    rep = dataclasses.replace(make_report(*rows), scaling=scaling_records(rows))
    out = text_of(render_bench(rep))
    assert "scaling  slope of log(time) against log(input bytes) ─" in out
    line = next(line for line in out.splitlines() if line.startswith("f ") and "B .." in line)
    assert line.split()[-2:] == ["1.00", "0.00"]


def test_progress_only_on_a_terminal():
    from rich.console import Console

    from jitscope.report.writers.progress import progress_bar

    piped = io.StringIO()
    with progress_bar(plain_console(piped), "jitscope bench") as update:
        update(0.5, 2, "scale: cached calls")
    assert piped.getvalue() == ""
    tty = io.StringIO()
    with progress_bar(Console(file=tty, force_terminal=True, width=80), "jitscope bench") as update:
        update(0.5, 2, "scale: cached calls")
    assert "scale: cached calls" in tty.getvalue()


def test_long_calls_are_abbreviated_and_spelled_out_once(make_row, make_report):
    long_call = "{'w': f32[784,512], 'b': f32[512]}, f32[128,784], i32[128], {'extra': f32[3]}"
    out = text_of(render_bench(make_report(make_row(call=long_call), make_row(call="f32[8]"))))
    assert f"f #1 = f({long_call})" in out
    assert "f #2 = f(f32[8])" in out
    rows = [line for line in out.splitlines() if line.startswith("f #1 ") and " = " not in line]
    assert len(rows) == 3  # cold, cached, derived tables


def full_row(make_row, call: str):
    """A row with every optional column: disk cache, device peak, eager, cold process."""
    from jitscope.model.bench import ColdRecord, EagerRecord, ProcessRecord, ProcessRun

    r = make_row(call=call)
    run = dataclasses.replace(r.cold.median, cache_hit=False)
    process = ProcessRun(wall=2.5, import_jax=0.9, load_target=0.01, make_inputs=0.02, first_call=run, startup=0.1)
    return dataclasses.replace(
        r, cold=ColdRecord((run,), run), device_peak_bytes=3 * 2**30,
        eager=EagerRecord(stats=r.cached.blocked, speedup=1.25), process=ProcessRecord((process,), 2.5),
        derived=dataclasses.replace(r.derived, breakeven_calls=1240.0, flops_per_second=9.71e10),
        warnings=("a note long enough to need wrapping: " + "word " * 40,),
    )


def test_every_column_fits_in_100_columns(make_row, make_report):
    rows = [full_row(make_row, "f32[1024,1024], f32[1024,1024]"), full_row(make_row, "f32[8], f32[8]")]
    out = text_of(render_bench(make_report(*rows)), width=100)
    assert max(len(line) for line in out.splitlines()) <= 100
    for head in ("disk cache", "rounds×loops", "outliers", "device peak", "XLA memory", "jit speedup", "break-even",
                 "import jax", "compile"):
        assert head in out
    assert "f #1 = f(f32[1024,1024], f32[1024,1024])" in out  # names abbreviated to make room
    assert "beyond 1.5 IQR; beyond 1 stddev" in " ".join(out.split())


def test_short_names_are_kept_when_the_tables_fit(make_row, make_report):
    out = text_of(render_bench(make_report(make_row(call="f32[8]"))), width=100)
    assert "#1" not in out and any(line.startswith("f(f32[8]) ") for line in out.splitlines())


def test_prose_is_wrapped_when_piped(make_row, make_report):
    """A piped console soft-wraps (IR is never folded), so the renderer wraps notes and legend itself."""
    from rich.console import Console

    from jitscope.report.writers.theme import THEME

    buf = io.StringIO()
    Console(file=buf, theme=THEME, width=100, color_system=None, soft_wrap=True).print(
        render_bench(make_report(full_row(make_row, "f32[8]"))))
    lines = buf.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 100
    assert any(line.startswith("warning: f(f32[8]): a note long enough") for line in lines)


def test_failed_calls_are_rows(make_row, make_report):
    from jitscope.model.bench import BenchFailure

    failure = BenchFailure("m.py:g", "f32[3]", "", "m.py:g(f32[3]) failed on its first call: RuntimeError: boom",
                           hint="fix it")
    out = text_of(render_bench(dataclasses.replace(make_report(make_row()), failures=(failure,))))
    assert "failed calls  recorded, and the run went on ─" in out
    line = next(line for line in out.splitlines() if line.startswith("g(f32[3])"))
    assert line.split(None, 1)[1] == "failed on its first call: RuntimeError: boom (fix it)"
