"""End-to-end runs on tiny shapes: the structure of the results, never absolute times."""

from __future__ import annotations

import json

import pytest

from jitscope.errors import DeviceMemoryError, ResourceError
from jitscope.model.bench import BenchReport
from jitscope.model.common import from_jsonable
from jitscope.report.writers.json import dumps
from jitscope.timing.plan import plan_calls
from jitscope.timing.runner import BenchOptions, bench_calls

FAST = BenchOptions(budget=0.02, min_rounds=3)


def run(bench_project, target, shapes=None, statics=None, options=FAST):
    calls = plan_calls([f"bench_targets.py:{target}"], shapes, statics, None, cwd=bench_project)
    return bench_calls(calls, options)


def test_cold_and_cached_structure(bench_project):
    result = run(bench_project, "scale")  # f32[16] from JITSCOPE_EXAMPLES
    (row,) = result.report.rows
    assert (row.target, row.call, row.input_bytes) == ("bench_targets.py:scale", "f32[16]", 64)
    cold = row.cold.median
    for phase in (cold.trace, cold.lower, cold.compile, cold.first_run):
        assert phase is not None and phase > 0
    assert cold.compiles == 1 and cold.cache_hit is None
    assert cold.total >= cold.returned > 0
    assert cold.unattributed == pytest.approx(cold.total - cold.trace - cold.lower - cold.compile - cold.first_run)
    stats = row.cached.blocked
    assert cold.total > stats.median > 0
    assert stats.rounds >= 3 and len(stats.samples) == stats.rounds
    assert stats.calls == stats.rounds * stats.loops
    assert stats.min <= stats.q1 <= stats.median <= stats.q3 <= stats.max
    assert row.cached.warmup_calls >= 2 and row.cached.output_leaves == 1
    assert row.cached.dispatch is not None and row.cached.dispatch.loops == stats.loops
    assert row.cost is not None and row.cost.flops and row.memory is not None
    assert row.derived.cold_in_calls and row.derived.cold_in_calls > 1
    assert row.derived.flops_per_second and row.derived.flops_per_second > 0
    assert result.report.settings.harness_overhead and result.report.settings.persistent_cache == "off"
    env = result.report.environment
    assert {"jax", "jaxlib", "backend", "device_kind"} <= set(env)
    assert env["device_count"] == 1 and env["x64"] is False  # an int and a bool (strings before schema 1.1)
    assert row.cached.steady_state is not None and row.cached.steady_state.windows >= 2
    assert result.profilers == []


def test_json_schema_and_round_trip(bench_project):
    report = run(bench_project, "scale").report
    data = json.loads(dumps(report))
    assert data["schema_version"] == "1.3" and data["kind"] == "jitscope.bench"
    assert set(data) == {"rows", "settings", "environment", "scaling", "comparison", "warnings", "failures",
                         "schema_version", "kind"}
    row = data["rows"][0]
    assert {"target", "call", "cold", "cached", "derived", "cost", "memory", "eager", "process"} <= set(row)
    assert set(row["cold"]["median"]) == {"total", "returned", "trace", "lower", "compile", "first_run",
                                          "unattributed", "compiles", "cache_hit"}
    assert {"median", "q1", "q3", "iqr", "mean", "stddev", "min", "max", "rounds", "loops", "outliers_iqr",
            "outliers_stddev", "unreliable", "samples"} <= set(row["cached"]["blocked"])
    assert from_jsonable(BenchReport, data) == report


def test_static_variants_and_scaling(bench_project):
    report = run(bench_project, "power").report  # examples: n=1 and n=2
    assert [r.statics for r in report.rows] == [{"n": "1"}, {"n": "2"}]
    assert [r.call for r in report.rows] == ["f32[8], n=1", "f32[8], n=2"]
    assert report.scaling == ()  # one size per variant
    report = run(bench_project, "scale", shapes=["f32[16]", "f32[4096]"]).report
    (series,) = report.scaling
    assert [p.input_bytes for p in series.points] == [64, 16384]
    assert series.run_slope is not None and series.compile_slope is not None


@pytest.mark.parametrize(("target", "shapes", "leaves"), [
    ("several", "f32[4], f32[4]", 3),  # dict with a tuple inside and a None leaf
    ("nothing", "f32[4]", 0),
    ("empty_tuple", "f32[4]", 0),
])
def test_outputs_of_any_shape_are_timed(bench_project, target, shapes, leaves):
    (row,) = run(bench_project, target, shapes=[shapes]).report.rows
    assert row.cached.output_leaves == leaves
    assert row.cached.blocked.median > 0 and row.cold.median.total > row.cached.blocked.median


def test_donated_arguments_get_fresh_inputs(bench_project):
    (row,) = run(bench_project, "add_donated", shapes=["f32[8]"],
                 options=BenchOptions(budget=0.02, min_rounds=3, cold_runs=2)).report.rows
    assert row.cached.fresh_inputs and row.cached.dispatch is None
    assert len(row.cold.runs) == 2
    assert any("donated" in w for w in row.warnings)


def test_arguments_donated_by_name_get_fresh_inputs_when_passed_as_keywords(bench_project):
    calls = plan_calls(["bench_targets.py:add_donated_by_name"], ["f32[8]"], None, ["y=f32[8]"], cwd=bench_project)
    report = bench_calls(calls, BenchOptions(budget=0.02, min_rounds=3, cold_runs=2)).report
    assert report.failures == ()  # a reused donated buffer fails with "Buffer has been deleted or donated"
    (row,) = report.rows
    assert row.cached.fresh_inputs and any("donated" in w for w in row.warnings)


def test_user_code_failure_is_recorded_and_the_run_goes_on(bench_project):
    calls = plan_calls(["bench_targets.py:fails_at_run", "bench_targets.py:branches_on_data",
                        "bench_targets.py:scale"], ["f32[3]"], None, None, cwd=bench_project)
    report = bench_calls(calls, FAST).report
    assert [r.target for r in report.rows] == ["bench_targets.py:scale"]
    first, second = report.failures
    assert first.error == ("bench_targets.py:fails_at_run(f32[3]) failed on its first call: "
                           "RuntimeError: broken on purpose")
    assert "bench_targets.py" in (first.detail or "") and first.call == "f32[3]"
    # `x` is an array: data, so the fix is jnp.where / lax.cond, never "mark it static"
    assert "TracerBoolConversionError" in second.error and "jnp.where" in (second.hint or "")
    assert "--static" not in (second.hint or "")
    data = json.loads(dumps(report))
    assert data["failures"][0]["error"] == first.error
    assert from_jsonable(BenchReport, data) == report


def test_device_out_of_memory_is_a_resource_error(bench_project):
    with pytest.raises(DeviceMemoryError) as info:
        run(bench_project, "device_oom", shapes=["f32[3]"])
    assert info.value.exit_code == 2
    assert "the device ran out of memory (asked for 16 GiB) while running" in info.value.message
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in (info.value.hint or "")


def test_inputs_too_large_are_refused_before_allocation(bench_project):
    with pytest.raises(ResourceError, match=r"need an estimated [\d.]+ TiB|need an estimated [\d.]+ GiB") as info:
        run(bench_project, "scale", shapes=["f32[1000000,1000000]"])
    assert "f32[1000000,1000000]" in info.value.message and info.value.hint == "use smaller --shapes"


def test_eager_and_profile(bench_project):
    result = run(bench_project, "scale", options=BenchOptions(budget=0.02, min_rounds=3, eager=True, profile=True))
    (row,) = result.report.rows
    assert row.eager is not None and row.eager.stats is not None and row.eager.speedup is not None
    assert row.eager.speedup == pytest.approx(row.eager.stats.median / row.cached.blocked.median)
    assert len(result.profilers) == 1 and "scale" in result.profilers[0][0]


def test_persistent_cache_hit_is_reported_and_config_restored(bench_project, tmp_path):
    import jax

    before = (jax.config.jax_compilation_cache_dir, jax.config.jax_enable_compilation_cache)
    options = BenchOptions(budget=0.01, min_rounds=3, cold_runs=2, persistent_cache=str(tmp_path / "cache"))
    report = run(bench_project, "scale", options=options).report
    (row,) = report.rows
    assert [r.cache_hit for r in row.cold.runs] == [False, True]
    assert report.settings.persistent_cache == str(tmp_path / "cache")
    assert report.settings.persistent_cache_source == "flag"
    assert (jax.config.jax_compilation_cache_dir, jax.config.jax_enable_compilation_cache) == before


def test_truly_cold_process(bench_project):
    options = BenchOptions(budget=0.01, min_rounds=3, cold_process=True)
    (row,) = run(bench_project, "scale", options=options).report.rows
    assert row.process is not None
    (proc,) = row.process.runs
    assert proc.wall > proc.import_jax > 0 and proc.first_call.total > 0
    assert proc.first_call.compile is not None and proc.wall > row.cold.median.total


def test_persistent_cache_from_jax_config_is_respected(bench_project, tmp_path):
    import jax

    before = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", str(tmp_path / "user-cache"))
    try:
        report = run(bench_project, "scale").report
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
    (row,) = report.rows
    assert report.settings.persistent_cache_source == "jax config"
    assert row.cold.median.cache_hit is False  # consulted, and missed: JAX only writes compiles over 1 s
    assert any("only writes entries for compiles over 1 s" in w for w in row.warnings)
