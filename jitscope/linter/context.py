"""What a rule may ask about the module it checks: the context API.

Rules import from here (and :mod:`jitscope.linter.rule`), never from
``jitscope.linter.analysis``; that keeps the analysis free to change shape. The API:

- traced code: ``ctx.functions`` (one :class:`TracedFunction` per function JAX traces,
  with the flags of every value in it: ``facts.is_traced(node)``, ``facts.flags_of(node)``
  against :data:`TAINT`/:data:`ARRAY`/:data:`CONTAINER`/:data:`FRESH`), ``ctx.body(facts)`` (its nodes with
  their parents) and ``ctx.calls_in_traced_code()``;
- jit: ``ctx.jit_sites`` (every application of jit/pmap) and ``ctx.call_sites`` (calls of
  jitted functions, with the loops around them and the loop variables), with
  :func:`static_params` and :func:`argument_for`;
- names: ``ctx.qualified_name(node, facts)`` (``np.random.rand`` -> ``numpy.random.rand``),
  ``ctx.is_builtin(facts, name)``, ``ctx.name_of(func)``;
- value origins: ``ctx.origin(facts, node)`` (self, a parameter, a fresh object, a closure,
  a module global, ...), ``ctx.known_container``, ``ctx.mutates``, ``ctx.is_ref_write``,
  ``ctx.is_array_update``;
- module: ``ctx.text``, ``ctx.tree``, ``ctx.module_values``, ``ctx.statements_around(line)``,
  ``ctx.enclosing_loops(line)``;
- findings: ``ctx.finding(rule, node, message, function, suggestion)``.
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import Any

from jitscope.linter.analysis import qualified_names as nm
from jitscope.linter.analysis.ast_walk import child_nodes, descendants
from jitscope.linter.analysis.discovered import JitSite
from jitscope.linter.analysis.function_refs import header_roots, walk_with_parents
from jitscope.linter.analysis.jit_calls import CallSite, argument_for, find_call_sites, static_params, uses
from jitscope.linter.analysis.module_analysis import ModuleAnalysis
from jitscope.linter.analysis.module_index import FuncNode, block_statements
from jitscope.linter.analysis.parameters import literal_ints, literal_strs, param_defaults, positional_params
from jitscope.linter.analysis.qualified_names import is_static_result, last_name, words
from jitscope.linter.analysis.ragged_batches import BatchLoops
from jitscope.linter.analysis.source import match_lines
from jitscope.linter.analysis.taint_calls import MUTATORS
from jitscope.linter.analysis.taint_flags import ARRAY, CONTAINER, FRESH, TAINT, FunctionFacts
from jitscope.linter.context_values import Origin, ValueOrigins, root_name
from jitscope.model.lint import Finding, RuleIdentity

#: What the taint pass learned about one traced function.
TracedFunction = FunctionFacts

__all__ = [
    "ARRAY",
    "CONTAINER",
    "FRESH",
    "MUTATORS",
    "TAINT",
    "BatchLoops",
    "CallSite",
    "FuncNode",
    "JitSite",
    "ModuleContext",
    "Origin",
    "TracedFunction",
    "argument_for",
    "block_statements",
    "descendants",
    "header_roots",
    "is_static_result",
    "label",
    "last_name",
    "literal_ints",
    "literal_strs",
    "match_lines",
    "param_defaults",
    "positional_params",
    "root_name",
    "static_params",
    "traced_because",
    "uses",
    "walk_with_parents",
    "words",
]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


class ModuleContext(ValueOrigins):
    """One analysed module, as the rules see it."""

    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis
        self._index = analysis.index
        self.path = analysis.index.path
        self.text = analysis.index.parsed.text
        self.tree = analysis.index.parsed.tree
        #: every traced function of the module
        self.functions: list[TracedFunction] = analysis.functions
        #: every application of jit/pmap in the module
        self.jit_sites: list[JitSite] = analysis.jit_sites
        #: module-level names and their assigned values (None for imports, functions, classes)
        self.module_values: dict[str, ast.expr | None] = analysis.index.module_values
        #: dataclass fields annotated ``int``/``bool`` and not declared static (traced only if a leaf)
        self.python_fields: set[str] = analysis.index.python_fields
        #: per-module results that several rules share (computed by the first rule that needs them)
        self.memo: dict[str, Any] = {}

    @property
    def lines(self) -> list[str]:
        """The module's lines, split on first use (most modules have no finding to place)."""
        return self._index.parsed.lines

    # -- findings --------------------------------------------------------------------------------

    def finding(
        self, rule: RuleIdentity, node: ast.AST, message: str, function: str = "<module>", suggestion: str = ""
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
            column=self.char_column(line, col) + 1,
            end_line=end_line,
            end_column=self.char_column(end_line, end_col) + 1,
            function=function,
            suggestion=suggestion,
        )

    def char_column(self, line: int, byte_col: int) -> int:
        """The character offset of an AST column (a UTF-8 byte offset) on 1-based line ``line``."""
        return self._index.parsed.char_column(line, byte_col)

    # -- traced code -----------------------------------------------------------------------------

    def body(self, facts: TracedFunction) -> list[tuple[ast.AST, ast.AST | None]]:
        """Every node of a traced function's own body with its parent (nested scopes excluded)."""
        key = id(facts.func)
        found = self._bodies.get(key)
        if found is None:
            found = _walk_scope(facts.func)
            self._bodies[key] = found
        return found

    def body_nodes(
        self, facts: TracedFunction, types: tuple[type[ast.AST], ...]
    ) -> list[tuple[ast.AST, ast.AST | None]]:
        """The pairs of :meth:`body` whose node is one of ``types``, in the same order. For a rule that
        looks at a few kinds of node: one filtering pass instead of the rule's own tests on every node
        (most of a body is names, constants and attributes)."""
        return [pair for pair in self.body(facts) if isinstance(pair[0], types)]

    @cached_property
    def _bodies(self) -> dict[int, list[tuple[ast.AST, ast.AST | None]]]:
        return {}

    def node_at(self, facts: TracedFunction, finding: Finding) -> ast.expr | None:
        """The expression of ``facts``'s body that ``finding`` spans (made by :meth:`finding`), if any."""
        key = f"node_at.{id(facts.func)}"
        spans: dict[tuple[int, int, int, int], ast.expr] | None = self.memo.get(key)
        if spans is None:  # indexed once per function: a generated body can have thousands of findings
            spans = {}
            for node, _ in self.body(facts):
                if isinstance(node, ast.expr) and getattr(node, "end_lineno", None) is not None:
                    end = node.end_lineno or 0
                    spans.setdefault((node.lineno, self.char_column(node.lineno, node.col_offset) + 1,
                                      end, self.char_column(end, node.end_col_offset or 0) + 1), node)
            self.memo[key] = spans
        return spans.get((finding.line, finding.column, finding.end_line, finding.end_column))

    def calls_in_traced_code(self) -> list[tuple[TracedFunction, ast.Call]]:
        """Every call inside traced code (computed once per module; several rules look at calls)."""
        found: list[tuple[TracedFunction, ast.Call]] | None = self.memo.get("calls")
        if found is None:
            found = [
                (facts, node)
                for facts in self.functions
                for node, _ in self.body(facts)
                if isinstance(node, ast.Call)
            ]
            self.memo["calls"] = found
        return found

    def traced(self, func: FuncNode) -> TracedFunction | None:
        """The facts of ``func`` when it is traced."""
        for facts in self.functions:
            if facts.func is func:
                return facts
        return None

    @cached_property
    def call_sites(self) -> list[CallSite]:
        """Calls of jitted functions in this module."""
        if self.analysis.call_sites is None:
            self.analysis.call_sites = find_call_sites(self._index, self.jit_sites)
        return self.analysis.call_sites

    # -- module structure ------------------------------------------------------------------------

    def class_named(self, name: str) -> ast.ClassDef | None:
        """A module-level class of this module."""
        return self._index.classes.get(name)

    def makes_closure(self, node: ast.expr) -> bool:
        """``smoothed_l1(beta)``: a call of a module function that returns a function it defines (a new
        function object on every call)."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return False
        func = self._index.defs.get(node.func.id)
        if func is None:
            return False
        local = {s.name for s in func.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return any(
            isinstance(s, ast.Return)
            and (isinstance(s.value, ast.Lambda) or (isinstance(s.value, ast.Name) and s.value.id in local))
            for s in block_statements(func.body)
        )

    def batch_loops(self, cs: CallSite) -> BatchLoops:
        """The loops around a call, for questions about ragged batches."""
        return BatchLoops(cs.loops, cs.function, self._index.defs)

    def name_of(self, func: FuncNode) -> str:
        """Qualified name of a function of this module (``Model.step``, ``outer.<locals>.f``)."""
        return self._index.name_of(func)

    def statements_around(self, line: int) -> list[ast.stmt]:
        """The statements that contain ``line``, outermost first."""
        return self._index.statement_chain(line)

    def enclosing_loops(self, line: int) -> list[ast.stmt]:
        """The ``for``/``while`` statements around ``line`` in its innermost function, outermost first."""
        chain = self.statements_around(line)
        start = max((i for i, s in enumerate(chain) if isinstance(s, (*_SCOPES[:2],))), default=-1)
        return [s for s in chain[start + 1 :] if isinstance(s, _LOOPS)]

    def is_function(self, name: str) -> bool:
        """A module-level ``def`` or ``class`` of that name."""
        return name in self._index.defs or name in self._index.classes

    def is_logger(self, name: str) -> bool:
        """A module-level name bound to ``logging.getLogger(...)`` (or structlog/loguru)."""
        return name in self._index.loggers

    def imported_names(self) -> dict[str, str]:
        """Import aliases of the module: local name -> qualified name."""
        return self._index.names.aliases

    def jitted_name(self, site: JitSite) -> str:
        """Name of the function a jit site wraps (``step``, ``Model.apply``)."""
        return self.name_of(site.target) if site.target is not None else (site.bound_name or "function")

    def caller_name(self, cs: CallSite) -> str:
        """Name of the function that contains a call of a jitted function."""
        return self.name_of(cs.function) if cs.function is not None else "<module>"

    # -- names -----------------------------------------------------------------------------------

    def qualified_name(self, node: ast.expr, facts: TracedFunction | None = None) -> str | None:
        """Qualified name of an imported thing (``np.random.rand`` -> ``numpy.random.rand``); inside
        a traced function, names it binds or closes over are not imports (None)."""
        if facts is None:
            return self._index.names.qualify(node)
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return None
        if root.id in facts.local_aliases:
            return self._index.names.qualify(node, facts.local_aliases)
        if root.id in facts.local_names or root.id in facts.closure or root.id in facts.comp_names:
            return None
        return self._index.names.qualify(node)

    def setattr_call(self, facts: TracedFunction, node: ast.AST, parent: ast.AST | None) -> ast.Call | None:
        """``setattr(obj, "h", x)`` / ``delattr(obj, "h")`` as a statement (the builtins, not shadowed)."""
        if not (
            isinstance(node, ast.Call) and isinstance(parent, ast.Expr) and isinstance(node.func, ast.Name)
        ):
            return None
        name = node.func.id
        if name not in ("setattr", "delattr") or len(node.args) < 2 or not self.is_builtin(facts, name):
            return None
        return node

    def runs_on_host(self, func: ast.expr, facts: TracedFunction | None = None) -> bool:
        """``jax.debug.callback``, ``jax.pure_callback``, ``io_callback``...: their function arguments run
        on the host at run time, not while tracing."""
        return nm.is_host_callback(self.qualified_name(func, facts))

    def partial_of(self, facts: TracedFunction, name: str) -> ast.expr | None:
        """The function a module-level ``name = functools.partial(fn, ...)`` wraps (``fn``'s expression),
        when ``name`` is not shadowed inside ``facts``; None otherwise."""
        if name in facts.local_names or name in facts.closure or name in facts.comp_names:
            return None
        value = self._index.module_values.get(name)
        if (
            isinstance(value, ast.Call)
            and value.args
            and self.qualified_name(value.func) == "functools.partial"
        ):
            return value.args[0]
        return None

    def is_builtin(self, facts: TracedFunction, name: str) -> bool:
        """True when ``name`` refers to the builtin of that name (not shadowed anywhere visible)."""
        return not (
            name in facts.local_names
            or name in facts.closure
            or name in facts.comp_names
            or name in facts.local_aliases
            or name in self._index.module_values
            or name in self._index.names.aliases
        )


# -- small AST helpers for messages and matching ---------------------------------------------------


def traced_because(facts: TracedFunction) -> str:
    """`` (`f` is traced: decorated with @jax.jit)`` -- why the function counts as traced."""
    return f" (`{facts.qualname}` is traced: {facts.reason})" if facts.reason else ""


def label(node: ast.expr) -> str:
    """Short source text for a node, for messages."""
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."


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
