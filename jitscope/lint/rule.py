"""The rule base class and the context every rule's ``check`` receives.

A rule is a class with a stable ``code`` (``JS101``), a kebab-case ``name``, a default
``severity``, a one-line ``summary``, a docstring with the headings "What it does /
Why is this bad? / Example / Use instead", and ``bad``/``good`` code examples that a
single parametrized test runs. Rules hold no state: ``check(ctx)`` yields findings.
Suppression comments and rule selection are handled once, in the engine.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from functools import cached_property
from typing import Any, ClassVar

from jitscope.lint.analysis.ast_walk import child_nodes
from jitscope.lint.analysis.discovered import JitSite
from jitscope.lint.analysis.jit_calls import CallSite, find_call_sites
from jitscope.lint.analysis.module_analysis import ModuleAnalysis
from jitscope.lint.analysis.module_index import FuncNode
from jitscope.lint.analysis.source import char_column
from jitscope.lint.analysis.taint import FunctionFacts
from jitscope.model.lint import Finding, RuleInfo, Severity

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


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

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        return iter(())

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or cls.summary)

    @classmethod
    def info(cls) -> RuleInfo:
        return RuleInfo(cls.code, cls.name, cls.severity, cls.summary, cls.docs(), cls.dynamic_only)


class ModuleContext:
    """One analysed module, as the rules see it."""

    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis
        self.index = analysis.index
        self.path = analysis.index.path
        self.lines = analysis.index.parsed.lines
        self.functions: list[FunctionFacts] = analysis.functions
        self.jit_sites: list[JitSite] = analysis.jit_sites
        #: per-module results that several rules share (computed by the first rule that needs them)
        self.memo: dict[str, Any] = {}

    # -- findings --------------------------------------------------------------------------------

    def finding(
        self, rule: Rule, node: ast.AST, message: str, function: str = "<module>", suggestion: str = ""
    ) -> Finding:
        """A finding of ``rule`` spanning ``node``, with character (not byte) columns."""
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end_line = getattr(node, "end_lineno", None) or line
        end_col = getattr(node, "end_col_offset", None)
        if end_col is None:
            end_col = col
        return Finding(
            code=rule.code,
            name=rule.name,
            message=message,
            severity=rule.severity,
            file=self.path,
            line=line,
            column=self._char(line, col) + 1,
            end_line=end_line,
            end_column=self._char(end_line, end_col) + 1,
            function=function,
            suggestion=suggestion,
        )

    def _char(self, line: int, byte_col: int) -> int:
        if 1 <= line <= len(self.lines):
            return char_column(self.lines[line - 1], byte_col)
        return byte_col

    # -- traversal -------------------------------------------------------------------------------

    def body(self, facts: FunctionFacts) -> list[tuple[ast.AST, ast.AST | None]]:
        """Every node of a traced function's own body with its parent (nested scopes excluded)."""
        cache = self._bodies
        key = id(facts.func)
        found = cache.get(key)
        if found is None:
            found = list(_walk_scope(facts.func))
            cache[key] = found
        return found

    @cached_property
    def _bodies(self) -> dict[int, list[tuple[ast.AST, ast.AST | None]]]:
        return {}

    @cached_property
    def call_sites(self) -> list[CallSite]:
        """Calls of jitted functions in this module."""
        if self.analysis.call_sites is None:
            self.analysis.call_sites = find_call_sites(self.index, self.jit_sites)
        return self.analysis.call_sites

    def traced(self, func: FuncNode) -> FunctionFacts | None:
        for facts in self.functions:
            if facts.func is func:
                return facts
        return None


def _walk_scope(func: FuncNode) -> list[tuple[ast.AST, ast.AST | None]]:
    roots: list[ast.AST] = [func.body] if isinstance(func, ast.Lambda) else list(func.body)
    out: list[tuple[ast.AST, ast.AST | None]] = []
    stack: list[tuple[ast.AST, ast.AST | None]] = [(r, None) for r in reversed(roots)]
    while stack:
        node, parent = stack.pop()
        out.append((node, parent))
        if isinstance(node, _SCOPES):
            continue
        for child in reversed(child_nodes(node)):
            stack.append((child, node))
    return out
