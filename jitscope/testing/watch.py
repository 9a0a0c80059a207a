"""One test's compiles: a fresh observer for the test's call, JAX's caches cleared first.

Why the caches are cleared (isolation, on by default). JAX's caches are process-wide: a
function and shape that an earlier test in the same process already compiled is a hit in
JAX's C++ dispatch cache, which never reaches Python, so no observer can see it, let
alone count it as "this test's". Counting by cache key against the test's own keys cannot
help for the same reason: a hit leaves no key to compare. Without clearing, a count would
depend on which tests ran before in the same process, which is the test order, ``-k``,
and how pytest-xdist happens to spread tests over its workers. So, by default, JAX's
in-memory caches (traces, lowerings, executables: ``jax.clear_caches()``, as ``jitscope
bench`` does before a cold call) are cleared at the start of each measured test's call,
and the test is charged for everything it compiles from empty caches: the same number in
every order and under ``-n``. The price is that the test compiles what earlier tests or
its fixtures already compiled; ``isolate=False`` (marker) or ``jitscope_isolate = false``
(ini) turns it off, and the count is then what this test made JAX compile in this process.

Only the call phase is watched, not fixture set-up: a session-scoped fixture compiles in
whichever test happens to use it first, which again depends on order and on ``-n``. A
fresh observer per test numbers compiles from 1 within the test, so a failure's causes
compare the test's own compiles, never another test's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from jitscope.errors import UsageError
from jitscope.model.run import USER, CompileEvent

#: The keyword arguments ``@pytest.mark.jitscope(...)`` takes.
MARKER_KEYS = ("max_compiles", "per_function", "isolate")


@dataclass(frozen=True, slots=True)
class MarkerOptions:
    """What ``@pytest.mark.jitscope(...)`` asked for, checked."""

    max_compiles: int | None = None
    per_function: bool = True
    isolate: bool | None = None  # None: the ini option decides


def parse_marker(args: Sequence[Any], kwargs: Mapping[str, Any]) -> MarkerOptions:
    """The marker's arguments, or a ``UsageError`` that says in one line what is wrong."""
    usage = "@pytest.mark.jitscope(max_compiles=1, per_function=True, isolate=True)"
    if args:
        raise UsageError(f"@pytest.mark.jitscope takes keyword arguments only, got {args[0]!r}",
                         hint=f"write {usage}")
    unknown = sorted(set(kwargs) - set(MARKER_KEYS))
    if unknown:
        raise UsageError(f"@pytest.mark.jitscope got an unknown argument {unknown[0]!r}",
                         hint=f"it takes {', '.join(MARKER_KEYS)}")
    limit = kwargs.get("max_compiles")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise UsageError(f"@pytest.mark.jitscope(max_compiles={limit!r}): max_compiles must be a "
                         "non-negative integer", hint="e.g. max_compiles=1")
    for name in ("per_function", "isolate"):
        value = kwargs.get(name)
        if value is not None and not isinstance(value, bool):
            raise UsageError(f"@pytest.mark.jitscope({name}={value!r}): {name} must be True or False")
    per_function = kwargs.get("per_function")
    return MarkerOptions(limit, True if per_function is None else per_function, kwargs.get("isolate"))


def clear_jax_caches() -> None:
    """Clear JAX's in-memory caches, if JAX is imported at all (if not, they are empty: nothing to import)."""
    if "jax" in sys.modules:
        from jitscope.jaxcompat.caches import clear_in_memory_caches

        clear_in_memory_caches()


class TestWatch:
    """The observer of one test's call: start, run the test, stop; then ``events`` are the test's compiles."""

    __test__ = False  # not a test class, whatever pytest's python_classes say

    def __init__(self, *, isolate: bool) -> None:
        self.isolate = isolate
        self.observer: Any = None
        self._stop: Callable[[], None] | None = None
        self._excluded: list[tuple[int, int]] = []  # (after, up to) event indexes that are not the test's

    def start(self) -> None:
        from jitscope.run.observer import RunObserver
        from jitscope.run.session import observing

        if self.isolate:
            clear_jax_caches()
        self.observer = RunObserver(effects=False)
        manager = observing(self.observer)
        manager.__enter__()

        def stop() -> None:
            manager.__exit__(None, None, None)

        self._stop = stop

    def stop(self) -> None:
        if self._stop is not None:
            self.observer.finish()  # freezes what is still pending (a trace without a compile)
            stop, self._stop = self._stop, None
            stop()

    @property
    def position(self) -> int:
        """How many events the observer has recorded so far."""
        return len(self.observer.events) if self.observer is not None else 0

    @contextmanager
    def excluded(self) -> Iterator[None]:
        """Compiles made inside the block are not the test's (``jit_bench``'s own cold calls)."""
        start = self.position
        try:
            yield
        finally:
            self._excluded.append((start, self.position))

    @property
    def events(self) -> list[CompileEvent]:
        """The user's jitted functions' events (not JAX's eager op-by-op compiles), outside excluded blocks."""
        if self.observer is None:
            return []
        return [e for e in self.observer.events if e.kind == USER
                and not any(lo < e.index <= hi for lo, hi in self._excluded)]

    def summary(self) -> tuple[int, float, dict[str, int]]:
        """(compiles, seconds of trace + lower + compile, compiles per function)."""
        events = self.events
        functions: dict[str, int] = {}
        for event in events:
            if event.compiled:
                functions[event.function] = functions.get(event.function, 0) + 1
        return sum(functions.values()), sum(e.total_s for e in events), functions


def check_max_compiles(events: Sequence[CompileEvent], limit: int, per_function: bool = True) -> str:
    """An assertion message when compiles exceed ``limit`` (per function, or in total); "" when within."""
    from jitscope.run.causes import describe_causes

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


def _matches(event: CompileEvent, function: str | None) -> bool:
    return function is None or function in (event.function, event.function.rsplit(".", 1)[-1])


class JitCompiles:
    """What the ``jit_compiles`` fixture returns: the compiles of the test's call so far."""

    def __init__(self, watch: Callable[[], TestWatch | None]) -> None:
        self._watch = watch
        self._start = 0

    @property
    def events(self) -> list[CompileEvent]:
        watch = self._watch()
        return [e for e in watch.events if e.index > self._start] if watch is not None else []

    def count(self, function: str | None = None) -> int:
        """Compiles of every jitted function, or of those whose name (or qualified name's last part) matches."""
        return sum(e.compiled for e in self.events if _matches(e, function))

    def assert_max(self, limit: int, function: str | None = None, *, per_function: bool = True) -> None:
        """Fail with every recompile's cause if more than ``limit`` compiles happened."""
        message = check_max_compiles([e for e in self.events if _matches(e, function)], limit, per_function)
        if message:
            raise AssertionError(message)

    def reset(self) -> None:
        """Count from now on (e.g. after a warm-up call)."""
        watch = self._watch()
        self._start = watch.position if watch is not None else 0
