"""The pytest plugin, run on small test files through ``pytester``."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from pathlib import Path

import jax  # noqa: F401 - imported here so pytester's in-process runs keep it (re-importing jaxlib aborts)
import pytest

pytest_plugins = ["pytester"]

#: Installed with the pytest11 entry point the plugin loads by itself; in an older editable
#: install it must be named (naming it twice would register it twice).
_ENTRY_POINT = any(ep.value == "jitscope.pytest_plugin" for ep in importlib.metadata.entry_points(group="pytest11"))
PLUGIN = () if _ENTRY_POINT else ("-p", "jitscope.pytest_plugin")

TESTS = """
import jax, jax.numpy as jnp, pytest

@jax.jit
def step(x):
    return x * 2

def test_steady():
    for _ in range(3):
        step(jnp.ones(3))

def test_ragged():
    for n in (5, 6, 7):
        step(jnp.ones(n))

@pytest.mark.jitscope(max_compiles=1)
def test_marked_fails():
    g = jax.jit(lambda x: x + 1)
    g(jnp.ones(2))
    g(jnp.ones(8))

@pytest.mark.jitscope(max_compiles=1)
def test_marked_passes():
    g = jax.jit(lambda x: x + 1)
    g(jnp.ones(2))
    g(jnp.ones(2))

def test_fixture(jit_compiles):
    h = jax.jit(lambda x, n: x * n, static_argnums=1)
    h(jnp.ones(2), 1)
    h(jnp.ones(2), 2)
    assert jit_compiles.count() == 2
    jit_compiles.assert_max(1)
"""


def test_report_marker_and_fixture(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_jax=TESTS)
    result = pytester.runpytest_inprocess(*PLUGIN, "--jitscope", "-q")
    result.assert_outcomes(passed=3, failed=2)
    out = result.stdout.str()
    # the marker's message names the function and every recompile's cause
    assert "jitscope: test_marked_fails.<locals>.<lambda> compiled 2 times (max_compiles=1)" in out
    assert "compile 2 from test_jax.py:19: x: shape (2,) -> (8,) (vs compile 1)" in out
    # the fixture's assertion too
    assert "n (static): value 1 -> 2" in out
    section = out[out.index("jitscope: JAX compiles per test"):]
    rows = [line.split() for line in section.splitlines()[1:6]]
    assert {r[-1].rsplit("::", 1)[-1]: int(r[0]) for r in rows} == {
        "test_ragged": 3, "test_steady": 1, "test_marked_fails": 2, "test_marked_passes": 1, "test_fixture": 2}
    assert "total: 9 compiles" in section


def test_without_the_option_nothing_is_reported(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_jax=TESTS)
    result = pytester.runpytest_inprocess(*PLUGIN, "-q", "-k", "steady or passes")
    result.assert_outcomes(passed=2)
    assert "jitscope" not in result.stdout.str()


def test_counts_reach_the_controller_under_xdist(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_jax=TESTS)
    result = pytester.runpytest_subprocess(*PLUGIN, "--jitscope", "-q", "-n", "2", "-k", "not marked")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "jitscope: JAX compiles per test" in out and "total: 6 compiles" in out


SAME_SHAPE = """
import jax, jax.numpy as jnp, pytest

@jax.jit
def step(x):
    return x * 2

@pytest.mark.jitscope(max_compiles=0)
def test_a():
    step(jnp.ones(3))

def test_b():
    step(jnp.ones(3))
    step(jnp.ones(3))
"""


def _saved_counts(path: Path) -> dict[str, int]:
    data = json.loads(path.read_text())
    assert data["kind"] == "jitscope.pytest-compiles" and data["schema_version"] == "1.0"
    return {t["nodeid"].rsplit("::", 1)[-1]: t["compiles"] for t in data["tests"]}


def test_counts_do_not_depend_on_test_order_or_xdist(pytester: pytest.Pytester) -> None:
    """Two tests compile the same function and shape: each is charged its compile, whichever ran first."""
    pytester.makepyfile(test_same=SAME_SHAPE)
    runs = {}
    for order in (("test_a", "test_b"), ("test_b", "test_a")):
        ids = [f"test_same.py::{name}" for name in order]
        result = pytester.runpytest_inprocess(*PLUGIN, *ids, "--jitscope-save", f"{order[0]}.json", "-q")
        # the marker's limit fails test_a in both orders: a compile of a shape test_b compiled first still counts
        result.assert_outcomes(passed=1, failed=1)
        assert "jitscope: step compiled 1 times (max_compiles=0)" in result.stdout.str()
        runs[order] = _saved_counts(pytester.path / f"{order[0]}.json")
    assert runs[("test_a", "test_b")] == runs[("test_b", "test_a")] == {"test_a": 1, "test_b": 1}
    # the same under pytest-xdist, each test on a worker of its own or not
    if importlib.util.find_spec("xdist") is not None:
        result = pytester.runpytest_subprocess(*PLUGIN, "-p", "xdist", "-n", "2", "--jitscope-save", "xdist.json",
                                               "-q")
        result.assert_outcomes(passed=1, failed=1)
        assert _saved_counts(pytester.path / "xdist.json") == {"test_a": 1, "test_b": 1}


def test_isolation_can_be_turned_off(pytester: pytest.Pytester) -> None:
    """Without clearing JAX's caches, the second test finds the shape compiled: the count depends on order."""
    pytester.makepyfile(test_same=SAME_SHAPE.replace("max_compiles=0", "max_compiles=0, isolate=False"))
    result = pytester.runpytest_inprocess(*PLUGIN, "test_same.py::test_b", "test_same.py::test_a", "-q",
                                          "--jitscope-save", "kept.json")
    result.assert_outcomes(passed=2)  # test_a's call hit the cache test_b filled
    result = pytester.runpytest_inprocess(*PLUGIN, "test_same.py::test_a", "test_same.py::test_b", "-q",
                                          "-o", "jitscope_isolate=false", "--jitscope-save", "ini.json")
    result.assert_outcomes(passed=1, failed=1)
    assert _saved_counts(pytester.path / "ini.json") == {"test_a": 1, "test_b": 0}
    assert json.loads((pytester.path / "ini.json").read_text())["isolated"] is False


@pytest.mark.parametrize(("marker", "message"), [
    ('max_compiles="x"', "@pytest.mark.jitscope(max_compiles='x'): max_compiles must be a non-negative integer"),
    ("max_compiles=-1", "@pytest.mark.jitscope(max_compiles=-1): max_compiles must be a non-negative integer"),
    ("max_compiles=True", "@pytest.mark.jitscope(max_compiles=True): max_compiles must be a non-negative integer"),
    ("1", "@pytest.mark.jitscope takes keyword arguments only, got 1"),
    ("max_compile=1", ("@pytest.mark.jitscope got an unknown argument 'max_compile' (it takes max_compiles, "
                       "per_function, isolate)")),
    ('isolate="no"', "@pytest.mark.jitscope(isolate='no'): isolate must be True or False"),
])
def test_bad_marker_is_one_clear_line(pytester: pytest.Pytester, marker: str, message: str) -> None:
    pytester.makepyfile(test_bad=f"""
import pytest

@pytest.mark.jitscope({marker})
def test_it():
    pass

def test_other():
    pass
""")
    result = pytester.runpytest_inprocess(*PLUGIN, "-q")
    result.assert_outcomes(passed=1, errors=1)  # only the marked test: set-up error, the others run
    out = result.stdout.str()
    assert f"jitscope: {message}" in out
    assert "Traceback" not in out and "During handling" not in out and "raise UsageError" not in out


@pytest.mark.parametrize(("args", "message"), [
    (("--jitscope-compare-threshold", "lots"), "bad --jitscope-compare-threshold 'lots' (use a percentage like 25%)"),
    (("--jitscope-compare-min-seconds", "-1"), "--jitscope-compare-min-seconds must not be negative, got '-1'"),
    (("--jitscope-compare", "missing.json"), "cannot read --jitscope-compare baseline missing.json"),
    (("--jitscope-bench-budget", "0"), "--jitscope-bench-budget must be positive"),
])
def test_bad_options_are_one_clear_line(pytester: pytest.Pytester, args: tuple[str, ...], message: str) -> None:
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    result = pytester.runpytest_inprocess(*PLUGIN, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: {message}" in result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_the_plugin_does_not_import_jax_unless_asked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="""
import sys

def test_no_jax():
    assert "jax" not in sys.modules
""")
    result = pytester.runpytest_subprocess(*PLUGIN, "-q", "-p", "no:cacheprovider", "--jitscope")
    result.assert_outcomes(passed=1)
    assert "total: 0 compiles" in result.stdout.str()
