"""Dynamic lint (``jitscope lint --trace``): findings from what really happened while tracing.

Static analysis cannot see into helpers in other modules, libraries, or values decided at
run time. Here jitscope traces each target (abstract inputs: nothing is allocated) and
turns what it observed into the same ``Finding`` records the static linter produces, so
suppression comments, select/ignore and every output format apply unchanged:

- side effects the effect monitor saw (JS101-JS106), at the line that ran them;
- trace failures explained by the tracer (JS201, JS202, JS203, JS107, JS301);
- a jaxpr that differs between two traces with identical inputs: hidden dependence on
  mutable global state or host randomness (JS105);
- recompilations in the declared call sequence, with every differing cache-key component
  against the nearest previous compile (JS306).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass

from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, check_call
from jitscope.model.effects import EffectKind, EffectRecord
from jitscope.model.lint import Finding
from jitscope.model.trace import Diagnostic
from jitscope.tracing.recompile import CallRecord, analyse_sequence, observe_sequence
from jitscope.tracing.session import trace_target
from jitscope.userframes import display_path

EFFECT_CODES: dict[EffectKind, str] = {
    EffectKind.PRINT: "JS101",
    EffectKind.STDOUT: "JS101",
    EffectKind.LOGGING: "JS101",
    EffectKind.FILE_IO: "JS102",
    EffectKind.OS: "JS102",
    EffectKind.NETWORK: "JS102",
    EffectKind.SUBPROCESS: "JS102",
    EffectKind.GLOBAL_WRITE: "JS103",
    EffectKind.ARGUMENT_MUTATION: "JS104",
    EffectKind.CLOSURE_MUTATION: "JS104",
    EffectKind.RANDOMNESS: "JS106",
    EffectKind.CLOCK: "JS106",
}

DIAGNOSTIC_CODES: dict[str, str] = {
    "bool_conversion": "JS201",
    "concretization": "JS202",
    "integer_conversion": "JS202",
    "array_conversion": "JS203",
    "tracer_leak": "JS107",
    "unhashable_static": "JS301",
}


@dataclass(frozen=True, slots=True)
class _Where:
    file: str
    line: int
    function: str


def _finding(code: str, message: str, where: _Where, suggestion: str = "") -> Finding:
    from jitscope.lint.engine import make_finding

    return make_finding(code, message, where.file, where.line, function=where.function, suggestion=suggestion)


def _definition(target: TargetHandle) -> _Where:
    fn = getattr(target.fn, "__func__", target.fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return _Where(display_path(target.source_file or "?"), 1, target.attr_path)
    line = code.co_firstlineno
    try:  # point at the `def` line, not at a decorator above it
        source, start = inspect.getsourcelines(fn)
        line = start + next(i for i, text in enumerate(source) if text.lstrip().startswith(("def ", "async def ")))
    except (OSError, TypeError, StopIteration):
        pass
    return _Where(display_path(code.co_filename), line, getattr(fn, "__name__", target.attr_path))


def _effect_finding(effect: EffectRecord) -> Finding:
    loc = effect.location
    where = _Where(display_path(loc.file), loc.line, loc.function)
    times = f" ({effect.count} times)" if effect.count > 1 else ""
    message = f"{effect.detail}, seen while tracing{times}: it happens once per trace, never in the compiled program"
    code = EFFECT_CODES[effect.kind]
    if effect.kind is EffectKind.GLOBAL_WRITE and "() on " in effect.detail:
        code = "JS104"  # a method call that mutates a global container, not a rebinding of the name
    return _finding(code, message, where, effect.describe().split("; ", 1)[-1])


def _diagnostic_finding(diag: Diagnostic, target: TargetHandle) -> Finding | None:
    code = DIAGNOSTIC_CODES.get(diag.kind)
    if code is None:
        return None
    if diag.location is not None:
        where = _Where(diag.location.file, diag.location.line, diag.location.function)
    else:
        where = _definition(target)
    return _finding(code, f"tracing {target.attr_path} failed: {diag.message}", where, diag.fix)


def _recompile_finding(call: CallRecord, target: TargetHandle, total: int) -> Finding:
    causes = "; ".join(str(d) for d in call.diffs) or "no difference in the arguments (hidden state?)"
    confirmed = "" if call.observed is None else " (confirmed: the body ran again)" if call.observed else ""
    message = (
        f"call {call.index} of {total} ({call.call}) recompiles {target.attr_path}{confirmed}; "
        f"differs from call {call.nearest} in: {causes}"
    )
    return _finding("JS306", message, _definition(target),
                    "keep shapes, dtypes, weak types, pytree structure, static values and the call form stable")


def _jaxpr_text(target: TargetHandle, argset: ArgSet) -> str | None:
    from jitscope.render.jaxpr import render_jaxpr_text

    record = trace_target(target, argset, watch_effects=False).record
    if record.jaxpr is None:
        return None
    return render_jaxpr_text(record.jaxpr, None, locations=False, header=False)


def lint_target(target: TargetHandle, calls: tuple[ArgSet, ...]) -> Iterator[Finding]:
    """Trace one target with ``calls`` (a call sequence) and yield what it got wrong."""
    for argset in calls:
        check_call(target, argset)
    first = trace_target(target, calls[0]).record
    for effect in first.effects.effects if first.effects else ():
        yield _effect_finding(effect)
    if first.diagnostic is not None:
        finding = _diagnostic_finding(first.diagnostic, target)
        if finding is not None:
            yield finding
        return
    if first.jaxpr is not None:
        from jitscope.render.jaxpr import render_jaxpr_text

        again = _jaxpr_text(target, calls[0])
        if again is not None and again != render_jaxpr_text(first.jaxpr, None, locations=False, header=False):
            yield _finding(
                "JS105",
                f"tracing {target.attr_path} twice with identical inputs gave different jaxprs: it depends on "
                "state that changes between traces (a mutable global, host randomness, a clock)",
                _definition(target),
                "pass the changing value as an argument",
            )
    if len(calls) > 1:
        yield from _sequence_findings(target, calls)


def _sequence_findings(target: TargetHandle, calls: tuple[ArgSet, ...]) -> Iterator[Finding]:
    try:
        params = list(inspect.signature(target.fn).parameters)
    except (TypeError, ValueError):
        params = []
    seq = analyse_sequence(target.name, calls, params, target.options.static_argnames, target.options.static_argnums)
    observed = observe_sequence(target, calls)
    for call, seen in zip(seq.calls, observed, strict=True):
        if call.compiles and call.index > 1:
            confirmed = CallRecord(call.index, call.call, True, call.nearest, call.diffs, seen)
            yield _recompile_finding(confirmed, target, len(calls))
        elif seen and not call.compiles:
            yield _finding(
                "JS306",
                f"call {call.index} of {len(calls)} ({call.call}) retraced {target.attr_path} although its "
                "arguments match an earlier call: something else in the cache key changed (global config, "
                "a non-hashable or identity-hashed static value)",
                _definition(target),
            )


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
