"""jitscope's pytest plugin: compile counts per test, limits as markers, and a fixture.

Registered through the ``pytest11`` entry point, so it is loaded wherever jitscope is
installed, and does nothing (JAX is not even hooked) until asked:

* ``pytest --jitscope`` prints, after the run, each test's compiles and compile time
  (trace + lower + compile), the worst tests first;
* ``@pytest.mark.jitscope(max_compiles=1)`` fails a test in which any jitted function
  compiles more than once (``per_function=False``: more than once in total), and the
  failure message lists the cause of every recompile;
* the ``jit_compiles`` fixture counts what compiled since the test started:
  ``jit_compiles.count()``, ``jit_compiles.count("step")``, ``jit_compiles.assert_max(1)``.

Counts travel to the controller in each report's ``user_properties``, so they add up
under pytest-xdist. Only the test's own jitted functions count, not JAX's eager op-by-op
compiles. Functions already compiled by an earlier test in the same process hit JAX's
cache: a test is charged for what it made JAX compile.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest

from jitscope.model.run import USER, CompileEvent

_COMPILES, _SECONDS = "jitscope_compiles", "jitscope_compile_s"
#: How many tests the --jitscope table lists.
TOP_TESTS = 20


class _State:
    """Per-session: the observer (once installed) and, on the controller, each test's counts."""

    def __init__(self) -> None:
        self.observer: Any = None
        self.removers: list[Callable[[], None]] = []
        self.starts: dict[str, int] = {}
        self.results: list[tuple[str, int, float]] = []

    def ensure_installed(self) -> Any:
        if self.observer is None:
            from jitscope.run.observer import RunObserver
            from jitscope.run.session import observing

            self.observer = RunObserver(effects=False)
            manager = observing(self.observer)
            manager.__enter__()

            def remove() -> None:
                manager.__exit__(None, None, None)

            self.removers.append(remove)
        return self.observer

    def events_since(self, start: int) -> list[CompileEvent]:
        if self.observer is None:
            return []
        return [e for e in self.observer.events[start:] if e.kind == USER]


_STATE = pytest.StashKey[_State]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jitscope")
    group.addoption("--jitscope", action="store_true", default=False,
                    help="jitscope: report JAX compiles and compile time per test, the worst first.")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "jitscope(max_compiles=None, per_function=True): fail the test if a jitted "
                            "function (or, with per_function=False, all of them together) compiles more often")
    state = config.stash[_STATE] = _State()
    if config.getoption("jitscope"):
        state.ensure_installed()


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        if state in _SESSIONS:
            _SESSIONS.remove(state)
        for remove in state.removers:
            remove()


def _state(config: pytest.Config) -> _State:
    return config.stash[_STATE]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    state = _state(item.config)
    if item.get_closest_marker("jitscope") is not None:
        state.ensure_installed()
    if state.observer is not None:
        state.starts[item.nodeid] = len(state.observer.events)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    marker = item.get_closest_marker("jitscope")
    if marker is not None and marker.kwargs.get("max_compiles") is not None:
        state = _state(item.config)
        events = state.events_since(state.starts.get(item.nodeid, 0))
        message = check_max_compiles(events, int(marker.kwargs["max_compiles"]),
                                     bool(marker.kwargs.get("per_function", True)))
        if message:
            pytest.fail(message, pytrace=False)
    return result


def pytest_runtest_teardown(item: pytest.Item) -> None:
    state = _state(item.config)
    if state.observer is not None and item.config.getoption("jitscope"):
        events = state.events_since(state.starts.get(item.nodeid, 0))
        item.user_properties.append((_COMPILES, sum(e.compiled for e in events)))
        item.user_properties.append((_SECONDS, round(sum(e.total_s for e in events), 6)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "teardown":
        return
    props: dict[str, Any] = dict(report.user_properties)
    if _COMPILES in props and _SESSIONS:
        _SESSIONS[-1].results.append((report.nodeid, int(props[_COMPILES]), float(props[_SECONDS])))


#: The running sessions' states, innermost last: reports carry no config (and under xdist they
#: arrive from the workers), so the report hook finds its session here. A stack, for pytester.
_SESSIONS: list[_State] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    _SESSIONS.append(_state(session.config))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not config.getoption("jitscope"):
        return
    from jitscope.view.format import fmt_duration as fmt_time

    results = sorted(_state(config).results, key=lambda r: (-r[2], -r[1], r[0]))
    terminalreporter.section("jitscope: JAX compiles per test (worst first)")
    total_compiles, total_s = sum(r[1] for r in results), sum(r[2] for r in results)
    for nodeid, compiles, seconds in results[:TOP_TESTS]:
        terminalreporter.write_line(f"{compiles:5d} compiles  {fmt_time(seconds):>9}  {nodeid}")
    if len(results) > TOP_TESTS:
        terminalreporter.write_line(f"... {len(results) - TOP_TESTS} more tests")
    terminalreporter.write_line(f"total: {total_compiles} compiles, {fmt_time(total_s)} tracing and compiling, "
                                f"{len(results)} tests")


def check_max_compiles(events: list[CompileEvent], limit: int, per_function: bool = True) -> str:
    """An assertion message when compiles exceed ``limit`` (per function, or in total); "" when within."""
    from jitscope.render.run import describe_causes

    compiled = [e for e in events if e.compiled]
    groups: dict[str, list[CompileEvent]] = {}
    for event in compiled:
        groups.setdefault(event.function if per_function else "all jitted functions", []).append(event)
    over = {name: group for name, group in groups.items() if len(group) > limit}
    if not over:
        return ""
    lines = []
    for name, group in over.items():
        lines.append(f"jitscope: {name} compiled {len(group)} times (max_compiles={limit})")
        for event in group:
            where = f" from {event.call_site}" if event.call_site is not None else ""
            why = describe_causes(event) or f"first compile: {event.signature}"
            label = f"{event.function} " if not per_function else ""
            lines.append(f"  {label}compile {event.number}{where}: {why}")
    return "\n".join(lines)


class JitCompiles:
    """What the ``jit_compiles`` fixture returns: compiles since the test started."""

    def __init__(self, state: _State) -> None:
        self._state = state
        state.ensure_installed()
        self._start = len(state.observer.events)

    @property
    def events(self) -> list[CompileEvent]:
        return self._state.events_since(self._start)

    def count(self, function: str | None = None) -> int:
        """Compiles of every jitted function, or of those whose name (or qualified name's last part) matches."""
        return sum(e.compiled for e in self.events
                   if function is None or function in (e.function, e.function.rsplit(".", 1)[-1]))

    def assert_max(self, limit: int, function: str | None = None, *, per_function: bool = True) -> None:
        """Fail with every recompile's cause if more than ``limit`` compiles happened."""
        events = [e for e in self.events if function is None or function in (e.function, e.function.rsplit(".", 1)[-1])]
        message = check_max_compiles(events, limit, per_function)
        if message:
            raise AssertionError(message)

    def reset(self) -> None:
        """Count from now on (e.g. after a warm-up call)."""
        self._start = len(self._state.observer.events)


@pytest.fixture
def jit_compiles(request: pytest.FixtureRequest) -> JitCompiles:
    """Counts JAX compiles during the test: ``jit_compiles.count()``, ``jit_compiles.assert_max(1)``."""
    return JitCompiles(_state(request.config))
