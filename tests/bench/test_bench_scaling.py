"""Log-log slopes and how rows are grouped into scaling series; static variants."""

from __future__ import annotations

import pytest

from jitscope.load.calls import static_variants
from jitscope.timing.scaling import loglog_slope, scaling_records


def test_loglog_slope_recovers_power_laws():
    xs = [1e3, 1e4, 1e5, 1e6]
    assert loglog_slope(xs, [x for x in xs]) == pytest.approx(1.0)
    assert loglog_slope(xs, [3e-9 * x**1.5 for x in xs]) == pytest.approx(1.5)
    assert loglog_slope(xs, [5e-6 for _ in xs]) == pytest.approx(0.0)


def test_loglog_slope_needs_two_distinct_positive_sizes():
    assert loglog_slope([10, 10], [1, 2]) is None
    assert loglog_slope([10], [1]) is None
    assert loglog_slope([0, 10], [1, 2]) is None


def test_scaling_groups_by_target_and_statics(make_row):
    rows = [
        make_row(call="f32[10]", input_bytes=40, median=1e-5, compile=0.01, statics={"n": "1"}),
        make_row(call="f32[1000]", input_bytes=4000, median=1e-3, compile=0.01, statics={"n": "1"}),
        make_row(call="f32[10]", input_bytes=40, median=2e-5, statics={"n": "2"}),  # one size only
        make_row(target="m.py:g", call="f32[10]", input_bytes=40, median=1e-5, compile=0.01),
        make_row(target="m.py:g", call="f32[100]", input_bytes=400, median=1e-5, compile=0.1),
    ]
    records = scaling_records(rows)
    assert [(r.target, r.variant) for r in records] == [("m.py:f", "n=1"), ("m.py:g", "")]
    f, g = records
    assert f.run_slope == pytest.approx(1.0) and f.compile_slope == pytest.approx(0.0)
    assert g.run_slope == pytest.approx(0.0) and g.compile_slope == pytest.approx(1.0)
    assert [p.input_bytes for p in f.points] == [40, 4000]


def test_static_variants_combine_names_and_keep_order():
    assert static_variants(None) == [[]]
    assert static_variants(["n=1", "n=2", "n=1"]) == [["n=1"], ["n=2"]]
    assert static_variants(["n=1", "mode='a'", "n=2"]) == [["n=1", "mode='a'"], ["n=2", "mode='a'"]]
