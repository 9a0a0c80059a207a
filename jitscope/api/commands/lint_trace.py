"""``jitscope lint --trace``: dynamic findings, what really happened while tracing each target.

Static analysis cannot see into helpers in other modules, libraries, or values decided at
run time. Here jitscope traces each target (abstract inputs: nothing is allocated) and
records what it observed in a :class:`~jitscope.linter.trace_context.TraceContext`; every
rule's ``check_trace`` (next to its static check, in ``jitscope/linter/rules/``) turns its
part into the same ``Finding`` records the static linter produces, so suppression
comments, select/ignore and every output format apply unchanged:

- side effects the effect monitor saw (JS101-JS106), at the line that ran them;
- trace failures explained by the tracer (JS201, JS202, JS203, JS107, JS301);
- a jaxpr that differs between two traces with identical inputs: hidden dependence on
  mutable global state or host randomness (JS105);
- recompilations in the declared call sequence, with every differing cache-key component
  against the nearest previous compile (JS306).

Kept apart from ``api/commands/lint.py`` so static lint (the pre-commit hook, CI, the language
server) never imports the tracer or JAX.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

from jitscope.linter.trace_context import Place, Recompilation, TraceContext
from jitscope.load.calls import calls_from_flags, load_all
from jitscope.load.mesh import example_mesh_scope, mesh_scope
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, check_call
from jitscope.model.lint import Finding
from jitscope.model.trace import Diagnostic
from jitscope.run.sequence import observe_sequence
from jitscope.tracing.recompile import analyse_target
from jitscope.tracing.session import trace_target
from jitscope.userframes import display_path


def dynamic_findings(
    targets: list[str], shapes: list[str] | None, static: list[str] | None, arg: list[str] | None,
    devices: int | None = None, mesh: str | None = None,
) -> list[Finding]:
    """Load and trace the targets (abstract inputs, nothing allocated); what happened, as findings."""
    with mesh_scope(devices, mesh):  # set up before the targets load: JAX fixes the device count at start
        plan = [(t, calls_from_flags(t, shapes, static, arg)) for t in load_all(targets)]
        with example_mesh_scope(argset for _, calls in plan for argset in calls):
            return lint_targets(plan)


def _definition(target: TargetHandle) -> Place:
    fn = getattr(target.fn, "__func__", target.fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return Place(display_path(target.source_file or "?"), 1, target.attr_path)
    line = code.co_firstlineno
    try:  # point at the `def` line, not at a decorator above it
        source, start = inspect.getsourcelines(fn)
        line = start + next(
            i for i, text in enumerate(source) if text.lstrip().startswith(("def ", "async def "))
        )
    except (OSError, TypeError, StopIteration):
        pass
    return Place(display_path(code.co_filename), line, getattr(fn, "__name__", target.attr_path))


def _jaxpr_text(target: TargetHandle, argset: ArgSet) -> str | None:
    from jitscope.report.views.jaxpr import render_jaxpr_text

    record = trace_target(target, argset, watch_effects=False).record
    if record.jaxpr is None:
        return None
    return render_jaxpr_text(record.jaxpr, None, locations=False, header=False)


def observe_target(target: TargetHandle, calls: tuple[ArgSet, ...]) -> TraceContext:
    """Trace one target with ``calls`` (a call sequence) and record what the rules' dynamic checks read."""
    for argset in calls:
        check_call(target, argset)
    first = trace_target(target, calls[0]).record
    effects = first.effects.effects if first.effects else ()
    observed = TraceContext(
        target.attr_path, _definition(target), len(calls), tuple(effects), first.diagnostic
    )
    if first.diagnostic is not None:
        return observed
    changed = False
    if first.jaxpr is not None:
        from jitscope.report.views.jaxpr import render_jaxpr_text

        again = _jaxpr_text(target, calls[0])
        changed = again is not None and again != render_jaxpr_text(
            first.jaxpr, None, locations=False, header=False
        )
    recompilations, failure, failed_call = _recompilations(target, calls) if len(calls) > 1 else ((), None, "")
    return TraceContext(
        observed.target, observed.definition, observed.calls, observed.effects, failure, changed, recompilations,
        failed_call,
    )


def _later_failure(target: TargetHandle, calls: tuple[ArgSet, ...], seen_runs: list[bool | None]
                   ) -> tuple[Diagnostic | None, str]:
    """The first later call of the sequence that fails to trace, explained, and which call it is.

    Only the calls ``observe_sequence`` could not watch (None: it failed, or there was no hook) are
    traced again, so a sequence that traces cleanly costs nothing more.
    """
    for index, (argset, seen) in enumerate(zip(calls, seen_runs, strict=True), 1):
        if index == 1 or seen is not None:
            continue
        diagnostic = trace_target(target, argset, watch_effects=False, want_jaxpr=False).record.diagnostic
        if diagnostic is not None:
            return diagnostic, f"call {index} of {len(calls)} ({argset.describe()})"
    return None, ""


def _recompilations(target: TargetHandle, calls: tuple[ArgSet, ...]
                    ) -> tuple[tuple[Recompilation, ...], Diagnostic | None, str]:
    seq = analyse_target(target, calls)
    seen_runs = observe_sequence(target, calls)
    failure, failed_call = _later_failure(target, calls, seen_runs)
    out: list[Recompilation] = []
    for call, seen in zip(seq.calls, seen_runs, strict=True):
        # What tracing saw wins over the prediction: a body that did not run again was a cache hit,
        # whatever the keys say (a component jitscope models more strictly than JAX does).
        if call.compiles and call.index > 1 and seen is not False:
            causes = tuple(str(d) for d in call.diffs)
            out.append(Recompilation(call.index, call.call, call.nearest, causes, seen))
        elif seen and not call.compiles:
            out.append(Recompilation(call.index, call.call, call.nearest, (), seen, unexplained=True))
    return tuple(out), failure, failed_call


def lint_target(target: TargetHandle, calls: tuple[ArgSet, ...]) -> Iterator[Finding]:
    """Trace one target with ``calls`` (a call sequence) and yield what every rule's dynamic check finds."""
    from jitscope.linter.registry import RULES

    observed = observe_target(target, calls)
    for rule in RULES:
        yield from rule().check_trace(observed)


def lint_targets(plan: list[tuple[TargetHandle, tuple[ArgSet, ...]]]) -> list[Finding]:
    """Dynamic findings for every (target, call sequence), deduplicated."""
    out: dict[tuple[str, str, int, str], Finding] = {}
    for target, calls in plan:
        for finding in lint_target(target, calls):
            # Several jitted wrappers of one function fail at the same line: report it once. Each
            # recompiling call of a sequence is its own finding (they share the `def` line).
            per_call = finding.message if finding.code == "JS306" else ""
            out.setdefault((finding.code, finding.file, finding.line, per_call), finding)
    return list(out.values())
