"""The pytest plugin, run on small test files through ``pytester``."""

from __future__ import annotations

import importlib.metadata

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
