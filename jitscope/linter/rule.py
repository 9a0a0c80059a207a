"""The rule base class.

A rule is a class in its own file under ``jitscope/linter/rules/`` (``js101_print_in_traced_code.py``)
with a stable ``code`` (``JS101``), a kebab-case ``name``, a default ``severity``, a one-line
``summary``, a docstring with the headings "What it does / Why is this bad? / Example / Use
instead", and ``bad``/``good`` code examples that a single parametrized test runs.

It has up to two checks, both stateless:

- ``check(ctx)``: the static check, over one analysed module (:mod:`jitscope.linter.context`);
- ``check_trace(trace)``: the dynamic check, over what ``jitscope lint --trace`` observed for one
  target (:mod:`jitscope.linter.trace_context`). By default it reports the side effects of the
  rule's ``effect_kinds`` and trace failures of its ``failure_kinds``.

A rule with a safe mechanical rewrite sets ``fixable`` and writes ``fix(ctx, facts, node, parents)``:
the :class:`~jitscope.model.lint.Fix` for the node its finding spans, or a short reason why that shape
gets none (see :mod:`jitscope.linter.fixes`).

Suppression comments and rule selection are handled once, in the engine.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, ClassVar

from jitscope.linter.context import ModuleContext, TracedFunction, label, traced_because
from jitscope.model.effect_catalogue import builtin_effect, effect_of_call
from jitscope.model.effects import EffectKind
from jitscope.model.lint import Finding, Fix, RuleInfo, Severity

if TYPE_CHECKING:  # the tracer's records: imported only by lint --trace, not by static lint
    from jitscope.linter.trace_context import TraceContext


class Rule:
    """Base class of every lint rule."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    #: True for rules only the tracer-based (``--trace``) lint can check.
    dynamic_only: ClassVar[bool] = False
    #: Code that must produce this rule's code / must not.
    bad: ClassVar[tuple[str, ...]] = ()
    good: ClassVar[tuple[str, ...]] = ()
    #: Side effects the tracer's effect monitor reports under this rule (and, for JS101/JS102/JS106,
    #: the kinds of catalogued calls the static check flags: see ``jitscope.model.effect_catalogue``).
    effect_kinds: ClassVar[frozenset[EffectKind]] = frozenset()
    #: Kinds of explained trace failures (``Diagnostic.kind``) reported under this rule.
    failure_kinds: ClassVar[frozenset[str]] = frozenset()
    #: True for rules whose findings may carry a safe fix (``jitscope lint --fix``).
    fixable: ClassVar[bool] = False

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        """Static findings in one module."""
        return iter(())

    def check_trace(self, trace: TraceContext) -> Iterator[Finding]:
        """Dynamic findings from one traced target."""
        for effect in trace.effects:
            if effect.kind in self.effect_kinds:
                yield trace.effect_finding(self, effect)
        if trace.failure is not None and trace.failure.kind in self.failure_kinds:
            finding = trace.failure_finding(self)
            if finding is not None:
                yield finding

    def catalogued_call(self, ctx: ModuleContext, facts: TracedFunction, func: ast.expr) -> str | None:
        """``print()``, ``os.remove()``...: what calling ``func`` is, when the side-effect catalogue lists it
        under one of this rule's ``effect_kinds`` (a builtin only where its name is not shadowed)."""
        if isinstance(func, ast.Name) and builtin_effect(func.id) in self.effect_kinds and ctx.is_builtin(
                facts, func.id):
            return f"{func.id}()"
        qualified = ctx.qualified_name(func, facts)
        if qualified and effect_of_call(qualified) in self.effect_kinds:
            return f"{qualified}()"
        return None

    def call_findings(
        self, ctx: ModuleContext, what: Callable[[TracedFunction, ast.Call], str | None], says: str, suggestion: str
    ) -> Iterator[Finding]:
        """A finding for every call in traced code that ``what`` names: "``what`` in `f` ``says``"."""
        for facts, call in ctx.calls_in_traced_code():
            name = what(facts, call)
            if name:
                yield ctx.finding(self, call, f"{name} in `{facts.qualname}` {says}" + traced_because(facts),
                                  facts.qualname, suggestion)

    def fix(self, ctx: ModuleContext, facts: TracedFunction, node: ast.expr,
            parents: dict[int, ast.AST]) -> Fix | str | None:
        """The safe fix of this rule's finding on ``node`` (in ``facts``'s function; ``parents`` maps a node's
        id to its parent there), or why that shape has none (a few words), or None where the rule never
        offers one for such a finding."""
        return None

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or cls.summary)

    @classmethod
    def info(cls) -> RuleInfo:
        return RuleInfo(cls.code, cls.name, cls.severity, cls.summary, cls.docs(), cls.dynamic_only)


class TracedCodeRule(Rule):
    """Rules about code JAX traces report ``error`` only where the analysis is sure the code is traced: in
    functions a transform traces directly (jitted, vmapped, lax bodies). A helper is traced code only by
    inference from its call sites (it may also run eagerly, or get static values from another caller):
    there a finding is a warning. Subclasses write ``_check``."""

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        functions = {facts.qualname: facts for facts in ctx.functions}
        for finding in self._check(ctx):
            facts = functions.get(finding.function)
            if finding.severity == "error" and facts is not None:
                finding = (dataclasses.replace(finding, severity="warning") if not facts.boundary
                           else self._refine(ctx, facts, finding))
            yield finding

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        return iter(())

    def _refine(self, ctx: ModuleContext, facts: TracedFunction, finding: Finding) -> Finding:
        """An error in a directly traced function, or a warning where something else leaves it uncertain."""
        return finding


class TracedValueRule(TracedCodeRule):
    """JS201-JS204: as :class:`TracedCodeRule`, and a warning where the value is traced only through a
    dataclass field annotated ``int``/``bool`` (see :func:`_maybe_static_field`)."""

    def _refine(self, ctx: ModuleContext, facts: TracedFunction, finding: Finding) -> Finding:
        return _maybe_static_field(ctx, facts, finding) if ctx.python_fields else finding


def _maybe_static_field(ctx: ModuleContext, facts: TracedFunction, finding: Finding) -> Finding:
    """A warning, not an error, when the value is traced only through a field annotated ``int``/``bool``:
    whether it is a leaf (traced) or static depends on its class (flax/chex ``pytree_node=False``,
    ``eqx.field(static=True)``, equinox's ``filter_jit``), which an annotation does not say."""
    node = ctx.node_at(facts, finding)
    field = None if node is None else _traced_only_through(facts, node, ctx.python_fields)
    if field is None:
        return finding
    note = (f" (`{field}` is annotated int/bool: traced only if its class keeps it as a pytree leaf; "
            "declare it static to be sure)")
    return dataclasses.replace(finding, severity="warning", message=finding.message + note)


def _traced_only_through(facts: TracedFunction, node: ast.expr, attrs: set[str]) -> str | None:
    """The ``obj.attr`` (``attr`` in ``attrs``) that alone makes ``node`` traced, or None when some other
    part of it is traced too (``x.sum() > s.n``: ``x`` is traced whatever ``n`` is)."""
    fields = [sub for sub in ast.walk(node) if isinstance(sub, ast.Attribute) and sub.attr in attrs
              and facts.flags_of(sub)]
    if not fields:
        return None
    parents = {child: parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}
    related: set[int] = set()
    for field_node in fields:
        related.update(id(sub) for sub in ast.walk(field_node))
        up: ast.AST | None = field_node
        while up is not None:
            related.add(id(up))
            up = parents.get(up)
    if any(facts.flags_of(sub) and id(sub) not in related for sub in ast.walk(node)):
        return None
    return label(fields[0])
