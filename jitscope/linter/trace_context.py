"""What a rule's dynamic check sees: the observations of ``jitscope lint --trace`` for one target.

The tracer (``jitscope.api.commands.lint_trace``) runs a target through jitscope's tracer with a call
sequence and fills in a :class:`TraceContext`: the side effects the effect monitor saw, the
explained trace failure, whether two identical traces gave different jaxprs, and the
recompilations of the sequence. Every rule's ``check_trace(trace)`` turns the part it owns
into findings, so a rule's static and dynamic checks live in one file. Only records here:
no JAX objects, nothing imported from the tracer.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass

from jitscope.model.effects import EffectRecord
from jitscope.model.lint import Finding, RuleIdentity
from jitscope.model.trace import Diagnostic
from jitscope.userframes import display_path


@dataclass(frozen=True, slots=True)
class Place:
    """A line in the user's code (the file as displayed)."""

    file: str
    line: int
    function: str
    #: 1-based byte offset in the line where the tracer knows it (a failure's frame); 0 when it does not
    column: int = 0


def _columns(where: Place) -> tuple[int, int]:
    """1-based (column, exclusive end column), in characters, of the code ``where`` points at: from the
    column the tracer knows (else the line's first character that is not blank) to the end of the line's
    code; (1, 2) when the file cannot be read."""
    text = linecache.getline(where.file, where.line).rstrip()
    if not text.strip():
        return 1, 2
    start = len(text) - len(text.lstrip())
    if where.column > 1:
        raw = text.encode()
        start = max(start, len(raw[: where.column - 1].decode(errors="ignore")))
    return start + 1, max(len(text), start + 1) + 1


@dataclass(frozen=True, slots=True)
class Recompilation:
    """One call of the sequence that compiled again."""

    index: int
    call: str
    #: the earlier call it is nearest to, and every cache-key component that differs from it
    nearest: int
    causes: tuple[str, ...]
    #: True when the body was seen to run again; None when it was not watched
    observed: bool | None
    #: True when the body ran again although the arguments match an earlier call
    unexplained: bool = False


@dataclass(frozen=True, slots=True)
class TraceContext:
    """What tracing one target with one call sequence showed."""

    target: str
    #: the target's ``def`` line
    definition: Place
    calls: int = 1
    effects: tuple[EffectRecord, ...] = ()
    #: the explained trace failure, if tracing failed
    failure: Diagnostic | None = None
    #: True when tracing twice with identical inputs gave different jaxprs
    jaxpr_changed: bool = False
    recompilations: tuple[Recompilation, ...] = ()
    #: which call of a sequence the failure is from ("call 2 of 3 (f32[8])"); "" for the first call
    failed_call: str = ""

    def failure_prefix(self) -> str:
        """``tracing f failed`` (``... failed in call 2 of 3 (f32[8])`` for a later call of a sequence)."""
        return f"tracing {self.target} failed" + (f" in {self.failed_call}" if self.failed_call else "")

    def finding(self, rule: RuleIdentity, message: str, where: Place, suggestion: str = "") -> Finding:
        """A dynamic finding of ``rule`` at ``where``: the code on its line, from the tracer's column."""
        column, end_column = _columns(where)
        return Finding(
            code=rule.code,
            name=rule.name,
            message=message,
            severity=rule.severity,
            file=where.file,
            line=where.line,
            column=column,
            end_line=where.line,
            end_column=end_column,
            function=where.function,
            suggestion=suggestion,
            source="dynamic",
        )

    def effect_finding(self, rule: RuleIdentity, effect: EffectRecord) -> Finding:
        """The finding for one side effect seen while tracing, at the line that ran it."""
        loc = effect.location
        times = f" ({effect.count} times)" if effect.count > 1 else ""
        message = f"{effect.detail}, seen while tracing{times}: it happens once per trace, never in the compiled program"
        where = Place(display_path(loc.file), loc.line, loc.function, loc.column)
        return self.finding(rule, message, where, effect.describe().split("; ", 1)[-1])

    def failure_finding(self, rule: RuleIdentity) -> Finding | None:
        """The finding for the explained trace failure (at the user's line, else at the ``def``)."""
        diag = self.failure
        if diag is None:
            return None
        loc = diag.location
        where = self.definition if loc is None else Place(loc.file, loc.line, loc.function, loc.column)
        return self.finding(rule, f"{self.failure_prefix()}: {diag.message}", where, diag.fix)
