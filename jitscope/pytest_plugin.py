"""jitscope's pytest plugin: compile counts per test, limits as markers, baselines, and two fixtures.

Registered through the ``pytest11`` entry point, so it is loaded wherever jitscope is
installed, and does nothing (JAX is neither imported nor hooked) until asked:

* ``pytest --jitscope`` prints, after the run, each test's compiles and compile time
  (trace + lower + compile), the worst tests first;
* ``@pytest.mark.jitscope(max_compiles=1)`` fails a test in which any jitted function
  compiles more than once (``per_function=False``: more than once in total), and the
  failure message lists the cause of every recompile;
* the ``jit_compiles`` fixture counts what compiled since the test's call started:
  ``jit_compiles.count()``, ``jit_compiles.count("step")``, ``jit_compiles.assert_max(1)``;
* ``--jitscope-save FILE`` writes every test's compiles and compile time; ``--jitscope-compare
  FILE`` fails the run when a test compiles more often, or for longer, than in that baseline;
* the ``jit_bench`` fixture measures a function as ``jitscope bench`` does (cold compile,
  calibrated cached calls), and ``--jitscope-bench-json FILE`` writes the results in
  pytest-benchmark's JSON format.

Counts are independent of test order and of ``-n``: JAX's in-memory caches are cleared at the
start of every measured test's call (``isolate=False`` on the marker, or ``jitscope_isolate =
false`` in the ini file, to keep them); ``jitscope.testing.watch`` says why. Counts travel to the
controller in each report's ``user_properties``, so they add up under pytest-xdist. Only the
test's own jitted functions count, not JAX's eager op-by-op compiles.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from jitscope.errors import JitscopeError

if TYPE_CHECKING:
    from jitscope.testing.baseline import BaselineComparison, CompileBaseline, TestCompiles
    from jitscope.testing.bench import JitBench
    from jitscope.testing.watch import JitCompiles, MarkerOptions, TestWatch  # noqa: F401 - the stash key's type

_COMPILES, _SECONDS, _FUNCTIONS, _BENCH = "jitscope_compiles", "jitscope_compile_s", "jitscope_functions", \
    "jitscope_bench"
#: How many tests the --jitscope table lists.
TOP_TESTS = 20


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jitscope")
    group.addoption("--jitscope", action="store_true", default=False,
                    help="jitscope: report JAX compiles and compile time per test, the worst first.")
    group.addoption("--jitscope-save", metavar="FILE", default=None,
                    help="jitscope: write every test's compiles and compile time to FILE (JSON), as a baseline.")
    group.addoption("--jitscope-compare", metavar="FILE", default=None,
                    help="jitscope: fail the run when a test compiles more often than in baseline FILE, "
                         "or its compile time grew beyond --jitscope-compare-threshold.")
    group.addoption("--jitscope-compare-threshold", metavar="PERCENT", default="25%",
                    help="jitscope: compile-time growth that counts as a regression (default 25%%) ...")
    group.addoption("--jitscope-compare-min-seconds", metavar="SECONDS", default="0.1",
                    help="jitscope: ... when it is also at least this many seconds (default 0.1), so noise "
                         "does not fail CI.")
    group.addoption("--jitscope-bench-json", metavar="FILE", default=None,
                    help="jitscope: write the jit_bench fixture's results to FILE in pytest-benchmark's JSON format.")
    group.addoption("--jitscope-bench-budget", metavar="SECONDS", default=None,
                    help="jitscope: seconds of timed cached calls per jit_bench call (default 0.5).")
    parser.addini("jitscope_isolate", type="bool", default=True,
                  help="jitscope: clear JAX's in-memory caches at the start of every measured test, so compile "
                       "counts do not depend on test order or -n (default true).")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "jitscope(max_compiles=None, per_function=True, isolate=True): fail the "
                            "test if a jitted function (or, with per_function=False, all of them together) "
                            "compiles more often; isolate: clear JAX's caches first")
    try:
        session = _Session(config)
    except JitscopeError as err:  # a bad option or baseline: pytest's one-line usage error, before any test runs
        raise pytest.UsageError(err.one_line()) from None
    config.pluginmanager.register(session, _PLUGIN_NAME)
    args = config.invocation_params.args if session.controller else ()  # said once, not by every xdist worker
    for option, value in paths_read_as_tests(args, Path(config.invocation_params.dir)):
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            f"jitscope: pytest chose its rootdir ({config.rootpath}) and config file ({config.inipath or 'none'}) "
            f"before it knew {option}, so it counted {value} as a test path; test ids are matched to the "
            f"baseline's anyway, but write {option}={value} to keep pytest's own choice"), stacklevel=2)


#: Options whose value is a path: written ``--option PATH``, pytest counts PATH among the test paths when it
#: chooses its rootdir (it does that before any plugin's options are known).
_PATH_OPTIONS = ("--jitscope-compare", "--jitscope-save", "--jitscope-bench-json")


def paths_read_as_tests(args: Sequence[str], invocation_dir: Path) -> list[tuple[str, str]]:
    """(option, value) for each of jitscope's path options given as two words whose value is an existing path
    outside the folder pytest was started in: pytest's rootdir and config file may have been chosen from it."""
    found = []
    for option, value in zip(args, args[1:], strict=False):
        if option in _PATH_OPTIONS and not value.startswith("-"):
            path = (invocation_dir / value).resolve()
            if path.exists() and not path.is_relative_to(invocation_dir.resolve()):
                found.append((option, value))
    return found


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.pluginmanager.get_plugin(_PLUGIN_NAME)
    if session is not None:
        config.pluginmanager.unregister(session)


_PLUGIN_NAME = "jitscope-session"
_PLAN = pytest.StashKey["MarkerOptions | None"]()
_WATCH = pytest.StashKey["TestWatch"]()


def _session(config: pytest.Config) -> _Session:
    session = config.pluginmanager.get_plugin(_PLUGIN_NAME)
    assert isinstance(session, _Session)
    return session


class _Session:
    """One pytest run: its options, and on the controller every test's counts and benchmarks."""

    def __init__(self, config: pytest.Config) -> None:
        from jitscope.testing.baseline import parse_fraction, parse_seconds

        self.config = config
        self.report = bool(config.getoption("jitscope"))
        save, compare = config.getoption("jitscope_save"), config.getoption("jitscope_compare")
        self.here = Path(config.invocation_params.dir)  # relative paths: from where pytest was started
        self.save = Path(save) if save else None
        self.compare = Path(compare) if compare else None
        self.threshold = parse_fraction(config.getoption("jitscope_compare_threshold"), "--jitscope-compare-threshold")
        self.min_seconds = parse_seconds(config.getoption("jitscope_compare_min_seconds"),
                                         "--jitscope-compare-min-seconds")
        budget = config.getoption("jitscope_bench_budget")
        self.bench_budget = parse_seconds(budget, "--jitscope-bench-budget") if budget is not None else None
        if self.bench_budget is not None and not self.bench_budget > 0:
            raise JitscopeError("--jitscope-bench-budget must be positive")
        bench_json = config.getoption("jitscope_bench_json")
        self.bench_json = Path(bench_json) if bench_json else None
        self.isolate = bool(config.getini("jitscope_isolate"))
        self.baseline: CompileBaseline | None = None
        if self.compare is not None:
            from jitscope.testing.baseline import load_baseline

            self.baseline = load_baseline(self.here / self.compare, self.compare)  # fail fast, before any test runs
        self.results: list[TestCompiles] = []
        self.benchmarks: list[dict[str, Any]] = []
        self.jax_environment: dict[str, Any] | None = None
        self.comparison: BaselineComparison | None = None

    @property
    def collecting(self) -> bool:
        """Whether every test is measured (not only marked ones and the fixture's users)."""
        return self.report or self.save is not None or self.compare is not None

    @property
    def controller(self) -> bool:
        """Not an xdist worker: the process that sees every test's report."""
        return not hasattr(self.config, "workerinput")

    # ------------------------------------------------------------ hooks (registered as a plugin object)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        from jitscope.testing.baseline import TestCompiles

        props: dict[str, Any] = {}
        for key, value in report.user_properties:
            if key == _BENCH and isinstance(value, dict):
                self.benchmarks.append(value["entry"])
                self.jax_environment = self.jax_environment or value.get("environment")
            else:
                props[key] = value
        if _COMPILES in props:
            self.results.append(TestCompiles(report.nodeid, int(props[_COMPILES]), float(props[_SECONDS]),
                                             {str(k): int(v) for k, v in dict(props.get(_FUNCTIONS, {})).items()}))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.controller:
            return
        from jitscope.testing.baseline import compare_baseline, make_baseline, save_baseline

        if self.save is not None or self.baseline is not None:
            current = make_baseline(self.results, isolated=self.isolate)
            if self.save is not None:
                save_baseline(self.here / self.save, current)
            if self.baseline is not None:
                self.comparison = compare_baseline(current, self.baseline, threshold=self.threshold,
                                                   min_seconds=self.min_seconds, name=str(self.compare))
                failed = self.comparison.regressions or self.comparison.matched_nothing
                if failed and session.exitstatus == pytest.ExitCode.OK:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.bench_json is not None:
            import json

            from jitscope.testing.benchjson import benchmark_document

            document = benchmark_document(self.benchmarks, jax_environment=self.jax_environment,
                                          cwd=self.config.rootpath)
            from jitscope.outputs import write_atomic

            write_atomic(self.here / self.bench_json, json.dumps(document, indent=4, allow_nan=False) + "\n")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from jitscope.units import fmt_duration, plural

        if self.report:
            results = sorted(self.results, key=lambda r: (-r.compile_s, -r.compiles, r.nodeid))
            terminalreporter.section("jitscope: JAX compiles per test (worst first)")
            for test in results[:TOP_TESTS]:
                word = "compile " if test.compiles == 1 else "compiles"
                terminalreporter.write_line(f"{test.compiles:5d} {word}  {fmt_duration(test.compile_s):>9}  "
                                            f"{test.nodeid}")
            if len(results) > TOP_TESTS:
                terminalreporter.write_line(f"... {len(results) - TOP_TESTS} more tests")
            terminalreporter.write_line(f"total: {plural(sum(r.compiles for r in results), 'compile')}, "
                                        f"{fmt_duration(sum(r.compile_s for r in results))} tracing and "
                                        f"compiling, {plural(len(results), 'test')}")
        if self.benchmarks:
            terminalreporter.section("jitscope: jit_bench (cached median per call; first call = trace + lower + "
                                     "compile + run)")
            for entry in sorted(self.benchmarks, key=lambda e: str(e["fullname"])):
                extra, stats = entry["extra_info"], entry["stats"]
                terminalreporter.write_line(
                    f"{fmt_duration(stats['median']):>9} ± IQR {fmt_duration(stats['iqr']):>9}  first call "
                    f"{fmt_duration(extra['first_call_s']):>9} (compile {fmt_duration(extra['compile_s'])})  "
                    f"{entry['fullname']}")
            if self.bench_json is not None:
                terminalreporter.write_line(f"written to {self.bench_json} (pytest-benchmark JSON)")
        if self.comparison is not None:
            from jitscope.testing.baseline import render_comparison

            bad = bool(self.comparison.regressions) or self.comparison.matched_nothing
            terminalreporter.section("jitscope: compiles against the baseline", red=bad, green=not bad)
            for line in render_comparison(self.comparison):
                terminalreporter.write_line(line, red=line.startswith(("REGRESSION", "FAILED")))


def _plan(item: pytest.Item) -> MarkerOptions | None:
    """What to do with this test: the marker's options (defaults without one), or None to leave it alone."""
    from jitscope.testing.watch import MarkerOptions, parse_marker

    marker = item.get_closest_marker("jitscope")
    if marker is not None:
        return parse_marker(marker.args, marker.kwargs)
    fixtures = getattr(item, "fixturenames", ())
    if _session(item.config).collecting or "jit_compiles" in fixtures:
        return MarkerOptions()
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    try:
        item.stash[_PLAN] = _plan(item)
        return
    except JitscopeError as err:
        message = f"jitscope: {err.one_line()}"
    item.stash[_PLAN] = None
    pytest.fail(message, pytrace=False)  # outside the except block: no "during handling of" chain


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    plan = item.stash.get(_PLAN, None)
    if plan is None:
        return (yield)
    from jitscope.testing.watch import TestWatch, check_max_compiles

    session = _session(item.config)
    watch = item.stash[_WATCH] = TestWatch(isolate=session.isolate if plan.isolate is None else plan.isolate)
    watch.start()
    try:
        result = yield
    finally:
        watch.stop()
        if session.collecting:
            compiles, seconds, functions = watch.summary()
            item.user_properties += [(_COMPILES, compiles), (_SECONDS, round(seconds, 6)), (_FUNCTIONS, functions)]
    if plan.max_compiles is not None:
        message = check_max_compiles(watch.events, plan.max_compiles, plan.per_function)
        if message:
            pytest.fail(message, pytrace=False)
    return result


@pytest.fixture
def jit_compiles(request: pytest.FixtureRequest) -> JitCompiles:
    """Counts JAX compiles during the test's call: ``jit_compiles.count()``, ``jit_compiles.assert_max(1)``."""
    from jitscope.testing.watch import JitCompiles

    node = request.node
    return JitCompiles(lambda: node.stash.get(_WATCH, None))


@pytest.fixture
def jit_bench(request: pytest.FixtureRequest) -> Generator[JitBench, None, None]:
    """Benchmarks like ``jitscope bench``: ``row = jit_bench(step, params, batch)`` (cold compile, cached calls)."""
    import contextlib

    from jitscope.testing.bench import DEFAULT_BUDGET, JitBench
    from jitscope.testing.benchjson import benchmark_entry

    node = request.node
    session = _session(request.config)

    def excluded() -> contextlib.AbstractContextManager[None]:
        watch = node.stash.get(_WATCH, None)
        return watch.excluded() if watch is not None else contextlib.nullcontext()

    def fail(message: str) -> None:
        pytest.fail(message, pytrace=False)

    budget = session.bench_budget if session.bench_budget is not None else DEFAULT_BUDGET
    bench = JitBench(node.name, node.nodeid, budget=budget, excluded=excluded, fail=fail)
    yield bench
    callspec = getattr(node, "callspec", None)
    for done in bench.results:
        entry = benchmark_entry(name=done.name, fullname=done.fullname, row=done.row, budget=done.options.budget,
                                min_rounds=done.options.min_rounds, params=getattr(callspec, "params", None),
                                param=getattr(callspec, "id", None))
        node.user_properties.append((_BENCH, {"entry": entry, "environment": dict(done.environment)}))
