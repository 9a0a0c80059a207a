"""The Python API: ``jitscope.trace``, ``bench``, ``profile``, ``lint`` and ``watch``.

Each takes the real function and real (or abstract) arguments, runs the same code the CLI
command runs, and returns the record the CLI renders (``api/results.py``). Importing this
module imports neither jax nor rich: the work happens when a function is called.

Arguments: arrays, pytrees, flax/equinox/haiku objects, optax states, Python values, as the
function is called. ``jax.ShapeDtypeStruct`` leaves are abstract: ``trace`` never allocates
anything (real arrays become their abstract values), ``bench`` and ``profile`` fill abstract
leaves with random data and time real arrays as given (a donated argument is copied before
each call, outside the timing). Options are keyword-only and named like the CLI's; a keyword
the function itself takes under one of those names goes through ``functools.partial``.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from jitscope.api.checks import check_count, check_seconds, split_codes

if TYPE_CHECKING:
    from jitscope.api.results import BenchResult, LintResult, ProfileResult, TraceResult, WatchResult
    from jitscope.load.target import TargetHandle

#: ``trace(stages=...)``: every stage, in the order jit makes them, and XLA's two analyses.
STAGES = ("jaxpr", "stablehlo", "hlo", "cost", "memory")  # model.trace.STAGES (not imported: no import cost)


def trace(
    fn: Callable[..., Any], /, *args: Any,
    stages: Sequence[str] | str = STAGES,
    effects: bool = True,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    shapes: str | Sequence[str] | None = None,
    locations: str = "full",
    depth: int | None = None,
    fold: bool | None = None,
    **kwargs: Any,
) -> TraceResult:
    """Trace ``fn(*args, **kwargs)`` as jit does, then lower and compile it: every stage, nothing run.

    Arrays in the arguments stand for their abstract values (shape, dtype, weak type, sharding);
    nothing is allocated on the device. ``shapes="f32[8,128], i32[]"`` (or a list: one call each)
    describes the arguments instead, as ``--shapes``. A failure in your code is in the result
    (``result.calls[0].diagnostic``), explained, not raised.

    >>> report = jitscope.trace(train_step, model, optimizer, batch)
    >>> print(report.calls[0].jaxpr_text)
    """
    from jitscope.api.results import TraceResult
    from jitscope.tracing.pipeline import run_trace

    wanted = _stages(stages)
    if locations not in ("full", "user", "none"):
        from jitscope.errors import UsageError

        raise UsageError(f"locations={locations!r} is not one of full, user, none")
    handle = _target(fn, args, kwargs, static_argnums, static_argnames, abstract=True, shapes=shapes)
    report, _ = run_trace([handle], _shape_list(shapes), None, None, wanted, effects, False)
    return TraceResult(report, stages=wanted, locations=locations, depth=depth, fold=fold)


def bench(
    fn: Callable[..., Any], /, *args: Any,
    budget: float = 0.5,
    min_rounds: int = 5,
    cold_runs: int = 1,
    eager: bool = False,
    dispatch: bool = True,
    seed: int = 0,
    persistent_cache: str | None = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    shapes: str | Sequence[str] | None = None,
    save: str | Path | None = None,
    compare: str | Path | None = None,
    **kwargs: Any,
) -> BenchResult:
    """Time the first call of ``fn(*args, **kwargs)`` (trace, lower, compile, run, with JAX's in-memory
    caches cleared) against cached calls, each blocked on every output leaf, as ``jitscope bench``.

    ``save``/``compare``: a baseline JSON to write, or to compare with (``result.record.comparison``).

    >>> result = jitscope.bench(train_step, model, optimizer, batch)
    >>> result.cached.median_s, result.cold.compile_s
    """
    from jitscope.api.results import BenchResult
    from jitscope.timing.api import run_bench
    from jitscope.timing.runner import BenchOptions

    check_seconds("budget", budget)
    check_count("min_rounds", min_rounds, limit=100_000)
    check_count("cold_runs", cold_runs, limit=1_000)
    handle = _target(fn, args, kwargs, static_argnums, static_argnames, abstract=False, shapes=shapes)
    options = BenchOptions(budget=budget, min_rounds=min_rounds, cold_runs=cold_runs, eager=eager,
                           dispatch=dispatch, seed=seed, persistent_cache=persistent_cache)
    result, _ = run_bench([handle], _shape_list(shapes), options=options,
                          save=Path(save) if save is not None else None,
                          compare=Path(compare) if compare is not None else None)
    return BenchResult(result.report)


def profile(
    fn: Callable[..., Any], /, *args: Any,
    calls: int = 20,
    budget: float = 0.3,
    seed: int = 0,
    trace_out: str | Path | None = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    shapes: str | Sequence[str] | None = None,
    **kwargs: Any,
) -> ProfileResult:
    """Profile cached calls of ``fn(*args, **kwargs)`` on the device and attribute the time to your source
    lines, as ``jitscope profile``.

    >>> result = jitscope.profile(train_step, model, optimizer, batch)
    >>> result.lines[0].location, result.lines[0].share
    """
    from jitscope.api.results import ProfileResult
    from jitscope.load.mesh import example_mesh_scope
    from jitscope.profiling.runner import ProfileOptions, profile_calls
    from jitscope.timing.plan import plan_calls

    check_count("calls", calls, limit=100_000)
    check_seconds("budget", budget)
    if trace_out is not None:
        Path(trace_out).mkdir(parents=True, exist_ok=True)
    handle = _target(fn, args, kwargs, static_argnums, static_argnames, abstract=False, shapes=shapes)
    options = ProfileOptions(calls=calls, budget=budget, seed=seed,
                             trace_out=str(trace_out) if trace_out is not None else None)
    planned = plan_calls([handle], _shape_list(shapes))
    with example_mesh_scope(argset for _, argset in planned):
        return ProfileResult(profile_calls(planned, options))


def lint(
    paths: str | Path | Sequence[str | Path] = ".",
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    fail_on: Literal["info", "warning", "error"] | None = None,
    config: str | Path | None = None,
    jobs: int | None = None,
) -> LintResult:
    """Lint Python files for JAX hazards, as ``jitscope lint --static-only`` (your code is read, never run).

    The ``[tool.jitscope.lint]`` table of the nearest ``pyproject.toml`` applies, with these options on top.

    >>> result = jitscope.lint("src/")
    >>> [f"{f.file}:{f.line} {f.code}" for f in result.findings]
    """
    from jitscope.api.results import LintResult
    from jitscope.config import load_config
    from jitscope.linter.engine import lint_paths

    targets = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    cfg = load_config(targets[0] if targets else Path("."), Path(config) if config is not None else None)
    lint_config = cfg.lint.with_overrides(select=split_codes(list(select) if select is not None else None),
                                          ignore=split_codes(list(ignore) if ignore is not None else None),
                                          exclude=tuple(exclude or ()), fail_on=fail_on)
    return LintResult(lint_paths(targets, lint_config, root=cfg.root, jobs=jobs))


class Watch:
    """What ``jitscope.watch()`` yields: ``report`` is filled when the block ends."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.report: WatchResult | None = None
        self._observer: Any = None

    @property
    def compiles(self) -> int:
        """XLA compiles of your jitted functions so far (inside the block too)."""
        from jitscope.model.run import USER

        if self.report is not None:
            return self.report.compiles
        events = self._observer.events if self._observer is not None else ()
        return sum(e.compiled for e in events if e.kind == USER)


@contextlib.contextmanager
def watch(name: str = "<block>", *, effects: bool = True, fresh: bool = False) -> Iterator[Watch]:
    """Watch every compile made inside the block, as ``jitscope run`` watches a program.

    ``fresh`` clears JAX's in-memory caches first, so what earlier code compiled is compiled (and
    counted) again; by default a function already compiled before the block is a cache hit and
    is not counted.

    >>> with jitscope.watch() as w:
    ...     for batch in batches: state = train_step(state, batch)
    >>> w.report.compiles, w.report.functions
    """
    from jitscope.api.results import WatchResult
    from jitscope.model.run import RunRecord
    from jitscope.run.collector import collector_paused
    from jitscope.run.observer import RunObserver
    from jitscope.run.session import observing
    from jitscope.run.summary import summarize

    if fresh:
        from jitscope.testing.watch import clear_jax_caches

        clear_jax_caches()
    handle = Watch(name)
    observer = RunObserver(effects=effects)
    handle._observer = observer
    outcome, code, notes = "finished", 0, []
    started = time.perf_counter()
    try:
        with observing(observer) as notes:
            yield handle
    except BaseException as exc:
        outcome, code = f"raised {type(exc).__name__}", 1
        raise
    finally:
        with collector_paused():
            events = tuple(observer.finish())
            jax = sys.modules.get("jax")
            record = RunRecord(program=name, argv=(), exit_code=code, outcome=outcome,
                               wall_s=round(time.perf_counter() - started, 6), events=events,
                               functions=summarize(events), notes=tuple(notes + observer.notes),
                               jax_version=getattr(jax, "__version__", None))
            handle.report = WatchResult(record)


# -- shared ------------------------------------------------------------------------------------------


def _target(fn: Any, args: Sequence[Any], kwargs: Mapping[str, Any], static_argnums: int | Sequence[int] | None,
            static_argnames: str | Sequence[str] | None, *, abstract: bool,
            shapes: str | Sequence[str] | None) -> TargetHandle:
    from jitscope.errors import UsageError
    from jitscope.load.live import display_name, live_target

    if not callable(fn):
        raise UsageError(f"the first argument must be the function to inspect, not {type(fn).__name__}")
    if shapes is not None and (args or kwargs):
        raise UsageError("shapes= describes the arguments: pass either the arguments or shapes=, not both")
    argnums = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
    argnames = (static_argnames,) if isinstance(static_argnames, str) else static_argnames
    name = display_name(fn)
    handle = live_target(fn, args, kwargs, text=name, attr_path=name.rsplit(":", 1)[-1],
                         how="passed to jitscope's Python API", label="", static_argnums=argnums,
                         static_argnames=argnames, abstract=abstract)
    if shapes is not None:
        import dataclasses

        handle = dataclasses.replace(handle, examples=())
    return handle


def _shape_list(shapes: str | Sequence[str] | None) -> list[str] | None:
    if shapes is None:
        return None
    return [shapes] if isinstance(shapes, str) else list(shapes)


def _stages(stages: Sequence[str] | str) -> tuple[str, ...]:
    from jitscope.errors import UsageError

    wanted = tuple(s.strip() for s in (stages.split(",") if isinstance(stages, str) else stages) if s.strip())
    unknown = [s for s in wanted if s not in STAGES]
    if unknown or not wanted:
        raise UsageError(f"unknown stage {unknown[0]!r}" if unknown else "no stage asked for",
                         hint=f"stages are {', '.join(STAGES)}")
    return tuple(s for s in STAGES if s in wanted)
