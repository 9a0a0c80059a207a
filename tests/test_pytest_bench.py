"""The ``jit_bench`` fixture and its pytest-benchmark JSON, run on small test files through ``pytester``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jax  # noqa: F401 - imported here so pytester's in-process runs keep it (re-importing jaxlib aborts)
import pytest

from jitscope.model.bench import BenchRow, CachedRecord, ColdRecord, ColdRun, DerivedRecord
from jitscope.testing.benchjson import benchmark_document, benchmark_entry, benchmark_stats
from jitscope.timing.stats import summarize
from tests.test_pytest_plugin import PLUGIN

pytest_plugins = ["pytester"]

#: Keys every benchmark of a pytest-benchmark document has, and those of its stats.
BENCH_KEYS = {"group", "name", "fullname", "params", "param", "extra_info", "options", "stats"}
STATS_KEYS = {"min", "max", "mean", "stddev", "rounds", "median", "iqr", "q1", "q3", "iqr_outliers",
              "stddev_outliers", "outliers", "ld15iqr", "hd15iqr", "ops", "total", "data", "iterations"}

EQUINOX_STEP = """
import equinox as eqx, jax, jax.numpy as jnp, optax, pytest

MODEL = eqx.nn.MLP(4, 2, 8, 2, key=jax.random.PRNGKey(0))
OPTIMIZER = optax.adam(1e-3)

@eqx.filter_jit
def train_step(model, opt_state, x, y):
    def loss(m):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)
    grads = eqx.filter_grad(loss)(model)
    updates, opt_state = OPTIMIZER.update(grads, opt_state)
    return eqx.apply_updates(model, updates), opt_state

@pytest.mark.parametrize("batch", [16])
def test_train_step(jit_bench, jit_compiles, batch):
    opt_state = OPTIMIZER.init(eqx.filter(MODEL, eqx.is_array))
    x, y = jnp.ones((batch, 4)), jnp.zeros((batch, 2))
    train_step(MODEL, opt_state, x, y)  # the test's own call: one compile
    row = jit_bench(train_step, MODEL, opt_state, x, y)
    assert row.target == "train_step"
    assert row.call == "MLP, (ScaleByAdamState, EmptyState), f32[16,4], f32[16,2]"
    assert row.cold.median.compiles == 1 and row.cold.median.compile is not None
    assert row.cached.blocked.rounds >= 5 and row.cached.blocked.median > 0
    # jit_bench's own cold call is not charged to the test
    assert jit_compiles.count("train_step") == 1
"""


def _load(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text())
    assert set(document) == {"machine_info", "commit_info", "benchmarks", "datetime", "version"}
    assert document["machine_info"]["python_version"] and "id" in document["commit_info"]
    for bench in document["benchmarks"]:
        assert BENCH_KEYS <= set(bench)
        assert STATS_KEYS <= set(bench["stats"])
        stats = bench["stats"]
        assert stats["min"] <= stats["q1"] <= stats["median"] <= stats["q3"] <= stats["max"]
        assert stats["rounds"] == len(stats["data"]) and stats["iterations"] >= 1
        assert stats["total"] == pytest.approx(sum(stats["data"])) and stats["ops"] == pytest.approx(1 / stats["mean"])
    return document


@pytest.mark.models
def test_jit_bench_on_an_equinox_step_with_an_optax_state(pytester: pytest.Pytester) -> None:
    pytest.importorskip("equinox")
    pytest.importorskip("optax")
    pytester.makepyfile(test_eqx=EQUINOX_STEP)
    result = pytester.runpytest_inprocess(*PLUGIN, "-q", "--jitscope", "--jitscope-bench-budget", "0.02",
                                          "--jitscope-bench-json", "out/bench.json")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "jitscope: jit_bench" in out and "test_eqx.py::test_train_step[16]" in out
    assert "written to out/bench.json (pytest-benchmark JSON)" in out
    document = _load(pytester.path / "out" / "bench.json")
    (bench,) = document["benchmarks"]
    assert bench["name"] == "test_train_step[16]" and bench["fullname"] == "test_eqx.py::test_train_step[16]"
    assert bench["params"] == {"batch": 16} and bench["param"] == "16"
    extra = bench["extra_info"]
    assert extra["function"] == "train_step" and extra["compiles"] == 1
    assert extra["compile_s"] > 0 and extra["first_call_s"] >= extra["compile_s"]
    assert bench["options"]["max_time"] == 0.02 and document["machine_info"]["jax"]["backend"] == "cpu"
    # --jitscope's table charges the test one compile: its own call, not jit_bench's
    section = out[out.index("jitscope: JAX compiles per test"):]
    assert "    1 compile " in section and "total: 1 compile," in section


@pytest.mark.models
def test_jit_bench_on_a_flax_nnx_step(pytester: pytest.Pytester) -> None:
    pytest.importorskip("flax.nnx")
    pytest.importorskip("optax")
    pytester.makepyfile(test_nnx="""
import jax.numpy as jnp, optax
from flax import nnx

def test_nnx_step(jit_bench):
    model = nnx.Linear(4, 2, rngs=nnx.Rngs(0))

    @nnx.jit
    def forward(model, x):
        return model(x)

    row = jit_bench(forward, model, jnp.ones((8, 4)))
    assert row.target.endswith("forward") and row.cold.median.compiles >= 1
    assert row.cached.blocked.rounds >= 5
""")
    result = pytester.runpytest_inprocess(*PLUGIN, "-q", "--jitscope-bench-budget", "0.02",
                                          "--jitscope-bench-json", "bench.json")
    result.assert_outcomes(passed=1)
    (bench,) = _load(pytester.path / "bench.json")["benchmarks"]
    assert bench["name"] == "test_nnx_step" and bench["params"] is None


def test_jit_bench_names_failures_and_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_jit="""
import functools, jax, jax.numpy as jnp, pytest

@functools.partial(jax.jit, static_argnums=1)
def scale(x, n):
    return x * n

def test_twice(jit_bench):
    first = jit_bench(scale, jnp.ones(8), 2)
    second = jit_bench.run(scale, (jnp.ones(64), 3), budget=0.01, min_rounds=3)
    named = jit_bench.run(scale, (jnp.ones(8),), {"n": 4}, name="scale-kw")
    assert first.call == "f32[8], 2" and first.statics == {}
    assert second.cached.blocked.rounds >= 3 and named.call == "f32[8], n=4"
    assert named.statics == {"n": "4"}

def test_fails(jit_bench):
    jit_bench(lambda x: x[jnp.argmax(x):], jnp.ones(4))

def test_bad_budget(jit_bench):
    jit_bench.run(scale, (jnp.ones(2), 1), budget=-1)
""")
    result = pytester.runpytest_inprocess(*PLUGIN, "-q", "--jitscope-bench-budget", "20ms",
                                          "--jitscope-bench-json", "bench.json")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "jit_bench: test_fails.<locals>.<lambda>(f32[4]) failed on its first call" in out
    assert "jit_bench: jit_bench: budget must be a positive number of seconds, got -1" not in out
    assert "jit_bench: budget must be a positive number of seconds, got -1" in out
    assert "During handling" not in out
    benches = {b["name"]: b for b in _load(pytester.path / "bench.json")["benchmarks"]}
    assert set(benches) == {"test_twice", "test_twice#2", "scale-kw"}
    assert benches["test_twice#2"]["fullname"] == "test_jit.py::test_twice#2"
    assert benches["scale-kw"]["fullname"] == "test_jit.py::test_twice::scale-kw"
    assert benches["test_twice#2"]["options"]["min_rounds"] == 3


def test_jit_bench_results_reach_the_controller_under_xdist(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_x="""
import jax, jax.numpy as jnp, pytest

@pytest.mark.parametrize("n", [4, 8])
def test_speed(jit_bench, n):
    jit_bench(jax.jit(jnp.sin), jnp.ones(n))
""")
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "xdist", "-n", "2", "-q", "--jitscope-bench-budget", "0.02",
                                           "--jitscope-bench-json", "bench.json")
    result.assert_outcomes(passed=2)
    names = [b["name"] for b in _load(pytester.path / "bench.json")["benchmarks"]]
    assert names == ["test_speed[4]", "test_speed[8]"]


def test_jit_bench_describes_typed_keys_and_extended_dtypes() -> None:
    """The fixture's call label made ``jit_bench(step, jax.random.key(0), x)`` fail with "Cannot interpret
    'key<fry>' as a data type" (issue 29)."""
    import jax.numpy as jnp
    import numpy as np

    from jitscope.testing.bench import target_for

    args = (jax.random.key(0), {"rngs": jax.random.split(jax.random.key(1, impl="rbg"), 2)},
            np.zeros((2,), jax.dtypes.float0), jnp.ones((3,), jnp.bfloat16))
    _, argset = target_for(jax.jit(lambda k, r, t, h: h), args, {})
    assert argset.describe() == "key<fry>[], {'rngs': key<rbg>[2]}, float0[2], bf16[3]"


def _row(samples: list[float]) -> BenchRow:
    cold = ColdRun(total=0.03, returned=0.03, trace=0.002, lower=0.004, compile=0.02, first_run=0.001,
                   unattributed=0.003, compiles=1)
    return BenchRow(target="step", call="f32[8]", label="", statics={}, input_bytes=32,
                    cold=ColdRecord((cold,), cold), cached=CachedRecord(summarize(samples, loops=10), None, 3, 1),
                    derived=DerivedRecord(cold_in_calls=1000.0, breakeven_calls=None, flops_per_second=None,
                                          bytes_per_second=None))


SAMPLES = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 9.0]


def test_benchmark_stats_and_extra_info_on_fixed_samples() -> None:
    stats = benchmark_stats(summarize(SAMPLES, loops=10))
    assert stats["data"] == SAMPLES and stats["rounds"] == 8 and stats["iterations"] == 10
    assert stats["total"] == 27.0 and stats["ops"] == pytest.approx(8 / 27)
    assert (stats["q1"], stats["median"], stats["q3"]) == (2.0, 3.0, 3.25)
    assert stats["iqr_outliers"] == 1 and stats["outliers"] == "1;1"  # 9.0 is beyond q3 + 1.5 IQR
    assert (stats["ld15iqr"], stats["hd15iqr"]) == (1.0, 4.0)
    entry = benchmark_entry(name="test_step", fullname="t.py::test_step", row=_row(SAMPLES), budget=0.5, min_rounds=5,
                            params={"shape": (8,), "n": 2}, param="shape0-2")
    assert entry["params"] == {"shape": "(8,)", "n": 2} and entry["options"]["max_time"] == 0.5
    extra = entry["extra_info"]
    assert (extra["first_call_s"], extra["trace_s"], extra["lower_s"], extra["compile_s"]) == (0.03, 0.002, 0.004, 0.02)
    assert extra["cold_in_calls"] == 1000.0 and extra["dispatch_median_s"] is None


def test_pytest_benchmark_reads_the_document(tmp_path: Path) -> None:
    """pytest-benchmark's own loader, statistics and ``compare`` command accept what jit_bench writes."""
    stats_module = pytest.importorskip("pytest_benchmark.stats")
    file_storage = pytest.importorskip("pytest_benchmark.storage.file")
    logger = pytest.importorskip("pytest_benchmark.logger")
    entry = benchmark_entry(name="test_step", fullname="t.py::test_step", row=_row(SAMPLES), budget=0.5, min_rounds=5)
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(benchmark_document([entry], jax_environment=None, cwd=tmp_path)))
    _load(path)
    storage = file_storage.FileStorage(tmp_path, logger=logger.Logger(logger.Logger.QUIET))
    (loaded,) = storage.load_benchmarks(str(path))
    assert loaded["name"] == "test_step" and loaded["median"] == 3.0 and loaded["iterations"] == 10
    theirs = stats_module.Stats()
    for sample in SAMPLES:
        theirs.update(sample)
    for field in ("min", "max", "mean", "stddev", "median", "rounds", "total", "ops", "stddev_outliers"):
        assert loaded[field] == pytest.approx(getattr(theirs, field)), field
    compare = subprocess.run([sys.executable, "-m", "pytest_benchmark", "compare", str(path)], capture_output=True,
                             text=True, check=False, timeout=60, cwd=tmp_path)
    assert compare.returncode == 0, compare.stderr
    assert "test_step" in compare.stdout
