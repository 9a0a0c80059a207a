"""Regression gate: thresholds, matching rows, and reading saved baselines."""

from __future__ import annotations

import json

import pytest

from jitscope.errors import UsageError
from jitscope.report.writers.json import dumps
from jitscope.timing.compare import compare, load_report, parse_threshold


def test_parse_threshold():
    assert parse_threshold("10%") == pytest.approx(0.10)
    assert parse_threshold(" 2.5% ") == pytest.approx(0.025)
    assert parse_threshold("0.2") == pytest.approx(0.2)
    for bad in ("ten", "0%", "-5%", ""):
        with pytest.raises(UsageError):
            parse_threshold(bad)


def statuses(record):
    return {(e.key, e.metric): e.status for e in record.entries}


def test_regression_improvement_same_new_missing(make_row, make_report):
    baseline = make_report(
        make_row(call="f32[8]", median=1e-5, compile=0.020),
        make_row(call="f32[16]", median=1e-5, compile=0.020),
        make_row(call="f32[32]", median=1e-5),
    )
    current = make_report(
        make_row(call="f32[8]", median=1.2e-5, compile=0.021),  # +20% run, +5% compile
        make_row(call="f32[16]", median=0.8e-5, compile=0.030),  # -20% run, +50% compile
        make_row(call="f32[64]", median=1e-5),
    )
    result = compare(current, baseline, threshold=0.10, baseline_name="base.json")
    got = statuses(result)
    assert got[("m.py:f(f32[8])", "cached median")] == "regression"
    assert got[("m.py:f(f32[8])", "compile")] == "same"
    assert got[("m.py:f(f32[16])", "cached median")] == "improvement"
    assert got[("m.py:f(f32[16])", "compile")] == "regression"
    assert got[("m.py:f(f32[64])", "cached median")] == "new"
    assert got[("m.py:f(f32[32])", "cached median")] == "missing"
    assert result.regressions == 2
    entry = next(e for e in result.entries if e.key == "m.py:f(f32[8])" and e.metric == "cached median")
    assert entry.change == pytest.approx(0.2)
    assert result.notes == ()


def test_exactly_at_threshold_is_not_a_regression(make_row, make_report):
    result = compare(make_report(make_row(median=1.1e-5, compile=0.02)),
                     make_report(make_row(median=1e-5, compile=0.02)), threshold=0.2)
    assert result.regressions == 0


def test_environment_mismatch_is_noted(make_row, make_report):
    other = {"jax": "0.10.2", "jaxlib": "0.10.2", "backend": "gpu", "device_kind": "H100", "device_count": 1}
    result = compare(make_report(make_row()), make_report(make_row(), env=other), threshold=0.1)
    assert any("backend differs" in n for n in result.notes)
    assert any("device_kind differs" in n for n in result.notes)


def test_saved_report_round_trips(tmp_path, make_row, make_report):
    path = tmp_path / "base.json"
    original = make_report(make_row(statics={"n": "2"}))
    path.write_text(dumps(original))
    assert load_report(path) == original


def test_load_report_rejects_bad_files(tmp_path, make_row, make_report):
    with pytest.raises(UsageError, match="cannot read"):
        load_report(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match="not JSON"):
        load_report(bad)
    bad.write_text(json.dumps({"kind": "jitscope.trace", "schema_version": "1.0"}))
    with pytest.raises(UsageError, match="not a jitscope bench report"):
        load_report(bad)
    data = json.loads(dumps(make_report(make_row())))
    data["schema_version"] = "2.0"
    bad.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="schema"):
        load_report(bad)


def test_schema_1_0_baseline_loads_with_typed_environment(tmp_path, make_row, make_report):
    data = json.loads(dumps(make_report(make_row())))
    data["schema_version"] = "1.0"
    data["environment"].update(device_count="1", x64="false")  # how 1.0 wrote them
    for key in ("failures",):
        del data[key]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    old = load_report(path)
    assert old.environment["device_count"] == 1 and old.environment["x64"] is False
    assert compare(make_report(make_row()), old, threshold=0.1).notes == ()


def test_environment_types_in_json(make_row, make_report):
    env = json.loads(dumps(make_report(make_row())))["environment"]
    assert env["device_count"] == 1 and env["x64"] is False


def test_device_memory_is_gated_with_the_times(make_row, make_report):
    """XLA's account of the memory a program needs (args + outputs + temporaries - donated) is a
    metric of the gate: the program that grew its temporaries regresses, an older report without
    the analysis is not compared."""
    import dataclasses

    from jitscope.model.bench import MEMORY_METRIC
    from jitscope.model.trace import MemoryRecord

    def with_memory(row, temp):
        return dataclasses.replace(row, memory=MemoryRecord(argument_bytes=1000, output_bytes=500, alias_bytes=500,
                                                            temp_bytes=temp))

    baseline = make_report(with_memory(make_row(call="f32[8]"), 1000), make_row(call="f32[16]"))
    current = make_report(with_memory(make_row(call="f32[8]"), 1500), make_row(call="f32[16]"))
    result = compare(current, baseline, threshold=0.10)
    memory = [e for e in result.entries if e.metric == MEMORY_METRIC]
    assert [(e.key, e.baseline, e.current, e.status) for e in memory] == [("m.py:f(f32[8])", 2000.0, 2500.0,
                                                                           "regression")]
    assert result.regressions == 1


@pytest.mark.parametrize("text", ["1e400%", "inf", "nan", "0", "-5%"])
def test_a_threshold_nothing_could_cross_is_refused(text):
    with pytest.raises(UsageError, match="finite positive"):
        parse_threshold(text)
