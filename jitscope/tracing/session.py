"""jitscope's tracer: trace a target with abstract inputs while watching the Python that runs.

``trace_target`` is the one place that calls ``jit(f).trace``. It wraps the user's
function so it can record what the body *saw* (tracers or static values) and how
often it ran, watches side effects while JAX traces, captures what the function
printed, and turns trace-time failures into a ``Diagnostic`` that points at the
user's line and names the fix. Inputs are ``jax.ShapeDtypeStruct``: nothing is
allocated on the device, so ``f32[50000,50000]`` traces instantly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import io
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jitscope.jaxcompat.jit import make_jit, returning_updates
from jitscope.load.abstract import to_abstract, warn_if_x64_disabled
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, jit_options_for
from jitscope.model.jaxpr import summarize
from jitscope.model.trace import ArgumentSummary, SeenArg, TraceRecord
from jitscope.tracing.diagnose import diagnose, settings_in_call
from jitscope.tracing.origins import const_origins
from jitscope.tracing.project import Project, project_of


@dataclass
class TraceHandle:
    """Live result of tracing: the JAX ``Traced`` stage plus the record. Stays in tracing/stages code."""

    target: TargetHandle
    argset: ArgSet
    jitted: Any
    traced: Any | None
    record: TraceRecord
    profiler: Any | None = None
    #: The user's code, as the jaxpr's locations were found (``tracing/project.py``).
    project: Project | None = None
    #: ``sample_lines``: seconds of tracing by line of the user's code (None: not sampled).
    trace_by_line: dict[tuple[str, int] | None, float] | None = None


@dataclass
class _Observer:
    """Wraps the user's function to see its arguments as the body receives them."""

    names: list[str]
    argset: ArgSet
    seen: tuple[SeenArg, ...] = ()
    arguments: tuple[ArgumentSummary, ...] = ()
    runs: int = 0
    problems: list[str] = field(default_factory=list)
    #: Return the argument leaves the body replaced in place too (see ``wrap``).
    return_updates: bool = False
    updated: int = 0

    def wrap(self, fn: Any) -> Any:
        from jitscope.jaxcompat.values import describe_call
        from jitscope.tracing.arguments import summarize_arguments

        @functools.wraps(fn)
        def observed(*args: Any, **kwargs: Any) -> Any:
            self.runs += 1
            if self.runs == 1:
                try:
                    self.seen = describe_call(self.names, args, kwargs)
                    self.arguments = summarize_arguments(self.names, args, kwargs, self.argset)
                except Exception as exc:  # noqa: BLE001 - describing must never break the user's trace
                    self.problems.append(f"could not describe arguments: {exc}")
            return call(*args, **kwargs)

        # nnx.jit writes the new state into the argument objects: returned too (and counted)
        call = returning_updates(fn, self._count_updates) if self.return_updates else fn
        return observed

    def _count_updates(self, n: int) -> None:
        self.updated = n


def _param_names(fn: Any, n_args: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), "args")
    return names[:n_args] + [f"{var}[{i}]" for i in range(len(names), n_args)]


@contextlib.contextmanager
def _watching(target: TargetHandle, enabled: bool) -> Iterator[Any]:
    if not enabled:
        yield None
        return
    from jitscope.effects.monitor import watch_effects

    with watch_effects(getattr(target.fn, "__code__", None)) as watch:
        yield watch


def _profile_trace(fn: Any, options: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A pyinstrument profile of tracing ``fn`` again, on a fresh jit wrapper (empty caches)."""
    from pyinstrument import Profiler

    jitted = make_jit(fn, options)
    profiler = Profiler(interval=0.0005, async_mode="disabled")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        profiler.start()
        try:
            jitted.trace(*args, **kwargs)
        finally:
            profiler.stop()
    return profiler


class _Printed(io.StringIO):
    """What the user's code printed while traced; its closing ``sys.stdout`` (this, then) loses nothing."""

    def close(self) -> None:
        pass


def trace_target(
    target: TargetHandle,
    argset: ArgSet,
    *,
    watch_effects: bool = True,
    profile: bool = False,
    want_jaxpr: bool = True,
    sample_lines: bool = False,
) -> TraceHandle:
    """Trace ``target`` with abstract ``argset``; never raises for failures in user code. ``sample_lines``:
    the tracing thread's stack is sampled for the tracing time by line (``TraceHandle.trace_by_line``)."""
    options, changed = jit_options_for(target, argset)
    how = target.how + (f"; {changed}" if changed else "")
    observer = _Observer(_param_names(target.fn, len(argset.args)), argset, return_updates=options.return_updates)
    # the observer returns the updates itself (and counts them for the report)
    jitted = make_jit(observer.wrap(target.fn), dataclasses.replace(options, return_updates=False))
    args, kwargs = to_abstract(argset)
    notes = [w for w in [warn_if_x64_disabled(argset)] if w]
    printed = _Printed()
    traced: Any | None = None
    error: Exception | None = None
    profiler = None
    project = project_of(target.module)
    sampler = None
    if sample_lines:
        from jitscope.tracing.line_sampler import LineSampler

        sampler = LineSampler(project.is_user_file)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            with _watching(target, watch_effects) as watch, sampler or contextlib.nullcontext():
                try:
                    traced = jitted.trace(*args, **kwargs)
                except Exception as exc:  # noqa: BLE001 - user code failed: explained below
                    error = exc
            effects = watch.record() if watch is not None else None
    elapsed = time.perf_counter() - start
    if profile and error is None:
        # Profiled in a second trace on a fresh wrapper: pyinstrument and the effect monitor
        # both need the interpreter's profile hook, and the timing above must not include either.
        profiler = _profile_trace(target.fn, options, args, kwargs)
    notes += [f"{w.category.__name__}: {w.message}" for w in caught if not _is_noise(w)]
    notes += observer.problems
    if observer.updated:
        how += (f"; the {observer.updated} argument leaves it updates in place are returned too, as the "
                "wrapper's own program returns them (nnx.jit)")
    diagnostic = jaxpr = summary = None
    if error is not None:
        diagnostic = diagnose(error, options, settings_in_call(observer.names, argset.args, argset.kwargs))
    elif traced is not None and want_jaxpr:
        from jitscope.jaxcompat.jaxpr import jaxpr_to_record

        jaxpr = jaxpr_to_record(traced.jaxpr, const_origins=const_origins(target.fn),
                                is_user_file=project.is_user_file)
        summary = summarize(jaxpr)
    record = TraceRecord(
        target=target.name,
        how=how,
        call=argset.describe(),
        static_argnums=options.static_argnums,
        static_argnames=options.static_argnames,
        donate_argnums=options.donate_argnums,
        seen=observer.seen,
        effects=effects,
        body_runs=observer.runs,
        trace_seconds=elapsed,
        printed=printed.getvalue(),
        jaxpr=jaxpr,
        summary=summary,
        diagnostic=diagnostic,
        warnings=tuple(dict.fromkeys(notes)),
        source_roots=project.shown_roots,
        arguments=observer.arguments,
    )
    return TraceHandle(target, argset, jitted, traced, record, profiler, project,
                       sampler.seconds(elapsed) if sampler is not None else None)


def _is_noise(w: warnings.WarningMessage) -> bool:
    # The x64 truncation warning is already reported once, in plain words, by warn_if_x64_disabled.
    return "Explicitly requested dtype" in str(w.message)
