"""Compile baselines: ``--jitscope-save`` and ``--jitscope-compare``, on records and through ``pytester``."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import pytest

from jitscope.errors import UsageError
from jitscope.testing.baseline import (
    CompileBaseline,
    TestCompiles,
    compare_baseline,
    load_baseline,
    match_tests,
    parse_fraction,
    parse_seconds,
    render_comparison,
    save_baseline,
)
from tests.test_pytest_plugin import PLUGIN

pytest_plugins = ["pytester"]


def _baseline(*tests: TestCompiles, jax_version: str = "0.10.2") -> CompileBaseline:
    return CompileBaseline(tests, {"python": "3.11.7", "jax": jax_version})


def test_more_compiles_is_a_regression_naming_the_functions() -> None:
    old = _baseline(TestCompiles("t.py::a", 1, 0.5, {"step": 1}), TestCompiles("t.py::b", 2, 0.5, {"f": 1, "g": 1}))
    new = _baseline(TestCompiles("t.py::a", 3, 0.5, {"step": 3}), TestCompiles("t.py::b", 1, 0.2, {"f": 1}))
    comparison = compare_baseline(new, old, name="base.json")
    assert [r.nodeid for r in comparison.regressions] == ["t.py::a"]
    assert comparison.regressions[0].reasons == ("compiles 1 -> 3 (step 1 -> 3)",)
    assert render_comparison(comparison) == [
        "2 tests compared with base.json (more compiles, or compile time +25% and at least 100 ms): 1 regressed",
        "REGRESSION t.py::a: compiles 1 -> 3 (step 1 -> 3)",
    ]


@pytest.mark.parametrize(("before", "after", "regressed"), [
    (0.5, 0.75, True),     # +50% and +0.25 s
    (0.5, 0.6, False),     # +20%: within the threshold
    (0.01, 0.05, False),   # +400% but only +40 ms: noise on a busy runner
    (0.0, 0.2, True),      # nothing compiled before, 0.2 s now
])
def test_compile_time_needs_both_the_threshold_and_the_minimum(before: float, after: float, regressed: bool) -> None:
    comparison = compare_baseline(_baseline(TestCompiles("t.py::a", 1, after)), _baseline(TestCompiles("t.py::a", 1,
                                  before)), threshold=0.25, min_seconds=0.1)
    assert bool(comparison.regressions) is regressed
    if regressed and before:
        assert comparison.regressions[0].reasons[0].startswith("compile time 500 ms -> 750 ms (+50%)")


def test_new_and_missing_tests_never_fail_and_versions_are_noted() -> None:
    old = _baseline(TestCompiles("t.py::gone", 1, 0.1), TestCompiles("t.py::kept", 1, 0.1), jax_version="0.4.38")
    new = _baseline(TestCompiles("t.py::kept", 1, 0.1), TestCompiles("t.py::added", 9, 9.0))
    comparison = compare_baseline(new, old, name="b.json")
    assert (comparison.compared, comparison.new, comparison.missing, comparison.regressions) == (1, 1, 1, ())
    lines = render_comparison(comparison)
    assert lines[0].endswith(": 0 regressed; 1 new, 1 not run")
    assert lines[1] == "note: the baseline was taken with jax 0.4.38, this run has 0.10.2"


def test_tests_match_across_a_moved_rootdir_and_only_unambiguously() -> None:
    baseline = ["tests/t.py::a", "tests/t.py::b", "t.py::c", "x/t.py::d"]
    current = ["proj/tests/t.py::a", "tests/t.py::b", "proj/t.py::c", "d/t.py::c", "t.py::d"]
    # a: this run's rootdir is above the baseline's; b: equal; c: two of this run's tests end in t.py::c,
    # so neither is taken for it; d: the baseline's rootdir was above this run's
    assert match_tests(current, baseline) == {"proj/tests/t.py::a": "tests/t.py::a", "tests/t.py::b": "tests/t.py::b",
                                              "t.py::d": "x/t.py::d"}
    comparison = compare_baseline(_baseline(TestCompiles("proj/tests/t.py::a", 3, 0.1)),
                                  _baseline(TestCompiles("tests/t.py::a", 1, 0.1)), name="b.json")
    assert (comparison.compared, comparison.new, comparison.missing) == (1, 0, 0)
    assert [r.nodeid for r in comparison.regressions] == ["proj/tests/t.py::a"]
    assert "matched by the rest of their path" in render_comparison(comparison)[-1]


def test_a_comparison_that_matches_nothing_says_so_and_fails() -> None:
    comparison = compare_baseline(_baseline(TestCompiles("a.py::x", 1, 0.1)), _baseline(TestCompiles("b.py::y", 1, 0.1)),
                                  name="b.json")
    assert comparison.matched_nothing and not comparison.regressions
    assert render_comparison(comparison)[1].startswith(
        "FAILED: no test of this run is in the baseline (this run has a.py::x, the baseline b.py::y)")
    assert not compare_baseline(_baseline(TestCompiles("a.py::x", 1, 0.1)), _baseline()).matched_nothing


def test_baseline_round_trips_and_bad_files_are_one_line(tmp_path: Path) -> None:
    baseline = _baseline(TestCompiles("t.py::a", 2, 0.25, {"step": 2}))
    save_baseline(tmp_path / "sub" / "b.json", baseline)
    assert load_baseline(tmp_path / "sub" / "b.json") == baseline
    cases = {
        "not json": "is not JSON",
        json.dumps({"kind": "jitscope.bench"}): "is not a jitscope compile baseline (write one with pytest "
                                                "--jitscope-save FILE)",
        json.dumps({"kind": "jitscope.pytest-compiles", "schema_version": "2.0", "tests": []}): "has schema 2.0",
        json.dumps({"kind": "jitscope.pytest-compiles", "schema_version": "1.0", "tests": [{"nodeid": 1}]}):
            "tests[0].nodeid is a number, expected a string",
    }
    for text, message in cases.items():
        (tmp_path / "bad.json").write_text(text)
        with pytest.raises(UsageError) as info:
            load_baseline(tmp_path / "bad.json")
        assert message in info.value.one_line() and "\n" not in info.value.one_line()


def test_thresholds_and_seconds_parse() -> None:
    assert parse_fraction("25%", "--t") == 0.25 and parse_fraction("0.1", "--t") == 0.1
    assert parse_seconds("100ms", "--s") == pytest.approx(0.1) and parse_seconds("2s", "--s") == 2.0
    assert parse_seconds("0", "--s") == 0.0
    with pytest.raises(UsageError, match="bad --t 'x'"):
        parse_fraction("x", "--t")
    with pytest.raises(UsageError, match="--s must not be negative"):
        parse_seconds("-1", "--s")


TESTS = """
import jax, jax.numpy as jnp

@jax.jit
def step(x):
    return x * 2

def test_one():
    step(jnp.ones(3))

def test_ragged():
    for n in SIZES:
        step(jnp.ones(n))
"""


def _write(pytester: pytest.Pytester, sizes: tuple[int, ...]) -> None:
    pytester.makepyfile(test_steps=TESTS.replace("SIZES", repr(sizes)))


def test_save_then_compare_fails_the_run_on_more_compiles(pytester: pytest.Pytester) -> None:
    _write(pytester, (4, 5))
    result = pytester.runpytest_inprocess(*PLUGIN, "-q", "--jitscope-save", "base.json")
    result.assert_outcomes(passed=2)
    saved = json.loads((pytester.path / "base.json").read_text())
    assert [(t["nodeid"], t["compiles"], t["functions"]) for t in saved["tests"]] == [
        ("test_steps.py::test_one", 1, {"step": 1}), ("test_steps.py::test_ragged", 2, {"step": 2})]
    assert saved["isolated"] is True and saved["environment"]["jax"] == jax.__version__
    assert "jitscope: JAX compiles per test" not in result.stdout.str()  # the table needs --jitscope

    # Same compiles: no regression. Compile time is left out (a loaded machine can double it; the
    # time gate has tests of its own with a written baseline).
    result = pytester.runpytest_inprocess(*PLUGIN, "-q", "--jitscope-compare", "base.json",
                                          "--jitscope-compare-min-seconds", "100")
    assert result.ret == pytest.ExitCode.OK
    assert "2 tests compared with base.json" in result.stdout.str() and ": 0 regressed" in result.stdout.str()

    _write(pytester, (4, 5, 6, 7))  # two more shapes: two more compiles
    result = pytester.runpytest_inprocess(*PLUGIN, "-q", "--jitscope-compare", "base.json",
                                          "--jitscope-compare-min-seconds", "100", "--jitscope-save", "new.json")
    result.assert_outcomes(passed=2)  # every test passed ...
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # ... and the run failed
    out = result.stdout.str()
    assert "1 regressed" in out
    assert "REGRESSION test_steps.py::test_ragged: compiles 2 -> 4 (step 2 -> 4)" in out
    assert "test_one" not in out[out.index("jitscope: compiles against the baseline"):]
    assert json.loads((pytester.path / "new.json").read_text())["tests"][1]["compiles"] == 4


def test_compare_under_xdist(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    _write(pytester, (4, 5))
    baseline = {"kind": "jitscope.pytest-compiles", "schema_version": "1.0", "environment": {}, "isolated": True,
                "tests": [{"nodeid": "test_steps.py::test_one", "compiles": 1, "compile_s": 100.0},
                          {"nodeid": "test_steps.py::test_ragged", "compiles": 1, "compile_s": 100.0}]}
    (pytester.path / "base.json").write_text(json.dumps(baseline))
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "xdist", "-n", "2", "-q", "--jitscope-compare", "base.json")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "2 tests compared with base.json" in out
    assert "REGRESSION test_steps.py::test_ragged: compiles 1 -> 2 (step 0 -> 2)" in out


def test_compare_with_a_baseline_outside_the_rootdir_in_the_space_form(pytester: pytest.Pytester,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``--jitscope-compare ../out/base.json``: pytest counts the path among the test paths when it chooses its
    rootdir, so the test ids gain a folder; the tests are still compared, and the regression still fails the run."""
    project, out = pytester.path / "proj", pytester.path / "out"
    project.mkdir()
    out.mkdir()
    (project / "test_steps.py").write_text(TESTS.replace("SIZES", repr((4, 5))))
    baseline = {"kind": "jitscope.pytest-compiles", "schema_version": "1.0", "environment": {}, "isolated": True,
                "tests": [{"nodeid": "test_steps.py::test_one", "compiles": 1, "compile_s": 100.0},
                          {"nodeid": "test_steps.py::test_ragged", "compiles": 1, "compile_s": 100.0}]}
    (out / "base.json").write_text(json.dumps(baseline))
    monkeypatch.chdir(project)
    for args in (("--jitscope-compare", "../out/base.json"), ("--jitscope-compare=../out/base.json",)):
        result = pytester.runpytest_inprocess(*PLUGIN, "-q", *args)
        result.assert_outcomes(passed=2, warnings=1 if len(args) == 2 else 0)
        assert result.ret == pytest.ExitCode.TESTS_FAILED, args
        out_text = result.stdout.str()
        assert "2 tests compared with ../out/base.json" in out_text, args
        assert "test_steps.py::test_ragged: compiles 1 -> 2 (step 0 -> 2)" in out_text, args
        space_form = len(args) == 2  # pytest's warning says why the ids moved, and what to write instead
        assert ("counted ../out/base.json as a test path" in out_text) is space_form

    (out / "base.json").write_text(json.dumps({**baseline, "tests": [{**t, "nodeid": "other.py::t"}
                                                                      for t in baseline["tests"][:1]]}))
    result = pytester.runpytest_inprocess(*PLUGIN, "-q", "--jitscope-compare=../out/base.json")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "FAILED: no test of this run is in the baseline" in result.stdout.str()
