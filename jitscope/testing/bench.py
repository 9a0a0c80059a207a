"""``jit_bench``: ``jitscope bench``'s measurement of a live function called with real arguments.

The function is benchmarked exactly as ``jitscope bench`` does a target (``bench.runner.bench_calls``):
a cold first call on a fresh jit wrapper after ``jax.clear_caches()``, split into trace, lower,
compile and first run by JAX's monitoring events; then cached calls on the compiled wrapper,
each blocked on every output leaf, calibrated on a 1-2-5 ladder, warmed up to a steady state,
timed in rounds until the budget is spent, with garbage collection off inside each round.

What is jitted, and what is static, follows the wrapper's own rules, as on every other path
(``jaxcompat/wrappers.py``): a ``jax.jit`` wrapper's own function and options (static and donated
arguments, shardings); ``equinox.filter_jit``: every non-array leaf static; ``nnx.jit``: the leaves
jax.jit cannot take static; a plain function: every non-array leaf static. The cached calls time the
wrapper the test calls.

The cold calls clear JAX's in-memory caches: what the test compiled before ``jit_bench`` compiles
again if the test calls it afterwards (``jit_bench``'s own compiles are not charged to the test).
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jitscope.errors import JitscopeError, UsageError, UserCodeError
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle
from jitscope.model.bench import BenchRow, Environment
from jitscope.timing.runner import BenchOptions

#: Defaults of ``jit_bench``: seconds of timed cached-call rounds, and cold calls (their median is reported).
DEFAULT_BUDGET = 0.5
DEFAULT_COLD_RUNS = 1
DEFAULT_MIN_ROUNDS = 5


@dataclass(frozen=True, slots=True)
class BenchDone:
    """One ``jit_bench`` call: the row, under the name the pytest-benchmark document gives it."""

    name: str
    fullname: str
    row: BenchRow
    options: BenchOptions
    environment: Environment


def _function_name(fn: Any) -> str:
    from jitscope.run.keys import unwrap_function

    inner = unwrap_function(fn)
    name = getattr(inner, "__qualname__", None) or getattr(inner, "__name__", None)
    return str(name) if name else type(fn).__name__


def target_for(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[TargetHandle, ArgSet]:
    """A target handle and its one call for a live ``fn``: a jax.jit's function and options, or filter-static."""
    from jitscope.jaxcompat.wrappers import recognise_live

    if not callable(fn):
        raise UsageError(f"jit_bench needs a function to call, got {type(fn).__name__}",
                         hint="jit_bench(step, params, batch)")
    found = recognise_live(fn)  # static and traced as the user's wrapper makes them, as every command does
    inner, options = found.fn, found.options
    try:
        names = list(inspect.signature(inner).parameters)
    except (TypeError, ValueError):
        names = []
    by_number = tuple(names[i] for i in options.static_argnums if 0 <= i < len(names))
    statics = tuple(n for n in dict.fromkeys(options.static_argnames + by_number)
                    if n in kwargs or n in names[: len(args)])
    name = _function_name(fn)
    module = sys.modules.get(getattr(inner, "__module__", "") or "") or types.ModuleType("jit_bench")
    argset = LiveCall(args, dict(kwargs), statics, label="", text=describe_call(args, kwargs))
    target = TargetHandle(text=name, name=name, attr_path=name, fn=inner, original=fn, options=options,
                          module=module, how="called by jit_bench with the test's arguments", examples=(argset,))
    return target, argset


@dataclass(frozen=True, slots=True)
class LiveCall(ArgSet):
    """A call with the test's own objects: described by their specs, never by ``repr`` (which copies arrays to
    the host, all of their elements for a large device array)."""

    text: str = ""

    def describe(self) -> str:
        return self.text


def describe_call(args: Sequence[Any], kwargs: dict[str, Any]) -> str:
    """``f32[16,4], {'w': f32[4,2]}, MLP, n=2``: arrays as specs, other objects by their type's name."""
    from jitscope.load.examples import to_spec
    from jitscope.load.specs import ArraySpec, format_value

    def short(value: Any) -> Any:
        if isinstance(value, (ArraySpec, int, float, complex, str, bytes, bool, type(None))):
            return value
        if isinstance(value, (list, tuple, dict)) and type(value) in (list, tuple, dict):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            shortened = {k: short(v) for k, v in items}
            return shortened if isinstance(value, dict) else type(value)(shortened.values())
        return _TypeName(type(value).__name__)

    parts = [format_value(short(to_spec(a))) for a in args]
    parts += [f"{k}={format_value(short(to_spec(v)))}" for k, v in kwargs.items()]
    return ", ".join(parts)


class _TypeName(str):
    def __repr__(self) -> str:
        return str(self)


def bench_function(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                   options: BenchOptions) -> tuple[BenchRow, Environment]:
    """Benchmark one call of ``fn``; the user's failure is raised as a ``UserCodeError``."""
    from jitscope.timing.runner import bench_calls

    target, argset = target_for(fn, args, kwargs)
    report = bench_calls([(target, argset)], options).report
    if report.failures:
        failure = report.failures[0]
        raise UserCodeError(failure.error, hint=failure.hint, detail=failure.detail)
    return report.rows[0], report.environment


def check_options(budget: float, cold_runs: int, min_rounds: int) -> BenchOptions:
    """``BenchOptions`` for ``jit_bench``, or a one-line ``UsageError``."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget > 0:
        raise UsageError(f"budget must be a positive number of seconds, got {budget!r}")
    for name, value in (("cold_runs", cold_runs), ("min_rounds", min_rounds)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"{name} must be a positive integer, got {value!r}")
    return BenchOptions(budget=float(budget), cold_runs=cold_runs, min_rounds=min_rounds)


class JitBench:
    """What the ``jit_bench`` fixture returns: ``jit_bench(step, params, batch)`` -> the ``BenchRow``.

    ``jit_bench.run(fn, args, kwargs, name=..., budget=..., cold_runs=..., min_rounds=...)`` takes
    the benchmark's own settings; every call's row is kept in ``results``.
    """

    def __init__(self, name: str, fullname: str, *, budget: float = DEFAULT_BUDGET,
                 cold_runs: int = DEFAULT_COLD_RUNS, min_rounds: int = DEFAULT_MIN_ROUNDS,
                 excluded: Callable[[], Any] | None = None, fail: Callable[[str], Any] | None = None) -> None:
        self._name, self._fullname = name, fullname
        self._defaults = (budget, cold_runs, min_rounds)
        self._excluded = excluded
        self._fail = fail
        self.results: list[BenchDone] = []

    def __call__(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> BenchRow:
        return self.run(fn, args, kwargs)

    def run(self, fn: Callable[..., Any], args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None, *,
            name: str | None = None, budget: float | None = None, cold_runs: int | None = None,
            min_rounds: int | None = None) -> BenchRow:
        try:
            default_budget, default_cold, default_rounds = self._defaults
            options = check_options(default_budget if budget is None else budget,
                                    default_cold if cold_runs is None else cold_runs,
                                    default_rounds if min_rounds is None else min_rounds)
            with self._excluded() if self._excluded is not None else contextlib.nullcontext():
                row, environment = bench_function(fn, tuple(args), dict(kwargs or {}), options)
        except JitscopeError as err:
            if self._fail is None:
                raise
            message = f"jit_bench: {err.one_line()}" + (f"\n{err.detail}" if err.detail else "")
        else:
            message = ""
        if message and self._fail is not None:  # outside the except block: no "during handling of" chain
            self._fail(message)
        number = len(self.results) + 1
        if name is not None:
            label, fullname = name, f"{self._fullname}::{name}"
        elif number == 1:
            label, fullname = self._name, self._fullname
        else:
            label, fullname = f"{self._name}#{number}", f"{self._fullname}#{number}"
        self.results.append(BenchDone(label, fullname, row, options, environment))
        return row

