"""Which values inside a traced function are traced.

A forward, flow-sensitive pass over one function body. Every name carries a few
flags: ``TAINT`` (may hold a tracer), ``ARRAY`` (known to be a JAX array),
``CONTAINER`` (a Python list/dict/set/tuple built here) and ``FRESH`` (created during
this call, so mutating it is harmless). Parameters that jit traces start tainted;
taint flows through arithmetic, indexing and calls, and stops at what is static
while tracing: ``.shape``/``.ndim``/``.dtype``/``.size``, ``len()``, ``isinstance``,
``x is None``, ``jnp.issubdtype`` and so on. Reassignment kills taint
(``n = x.shape[0]``), branches merge, loops iterate to a fixed point.

The result is a map from expression nodes to flags that the rules query, plus the
calls this function makes to other functions in the module (with which parameters
receive traced values), so the analysis follows helpers transitively.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import cached_property

from jitscope.linter.analysis import qualified_names as nm
from jitscope.linter.analysis.class_members import annotation_kind
from jitscope.linter.analysis.dict_keys import dict_names, iterates_keys
from jitscope.linter.analysis.module_index import FuncNode, ModuleIndex
from jitscope.linter.analysis.taint_expressions import ExpressionEvaluator
from jitscope.linter.analysis.taint_flags import (
    ARRAY,
    CONTAINER,
    ELEMS,
    FRESH,
    TAINT,
    CallEdge,
    FunctionFacts,
    Summarizer,
    container_defaults,
    merge_env,
)
from jitscope.linter.analysis.taint_narrowing import eager_only_branch, exits, narrowed_names

__all__ = ["ARRAY", "CONTAINER", "ELEMS", "FRESH", "TAINT", "CallEdge", "FunctionFacts", "TaintAnalyzer"]


_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


class TaintAnalyzer(ExpressionEvaluator):
    """Runs the taint pass over one function; see the module docstring."""

    def __init__(
        self,
        index: ModuleIndex,
        facts: FunctionFacts,
        summarize: Summarizer | None = None,
    ) -> None:
        self.index = index
        self.facts = facts
        self.flags = facts.flags
        self.summarize = summarize
        func = facts.func
        self.env: dict[str, int] = {}
        #: every name assigned anywhere in the function (local in Python's scoping)
        self.bound: set[str] = set()
        args = func.args
        containers = container_defaults(func)
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if a.arg in facts.tainted_params:
                flags = (TAINT | ARRAY) if a.arg in facts.array_params else TAINT
                kind = annotation_kind(a.annotation, index.classes)
                if a.arg in containers or kind == "container":
                    # `program_ids=()`, `limit: tuple[jax.Array, jax.Array]`: a Python container, not an array
                    flags = TAINT | CONTAINER | (ELEMS if flags & ARRAY else 0)
                elif kind == "str":
                    flags = 0  # a str is never a JAX leaf
                elif kind == "object":
                    flags = TAINT  # `sys: System`: its fields may be leaves or static
                self.env[a.arg] = flags
            else:
                self.env[a.arg] = 0
        for star in (args.vararg, args.kwarg):
            if star is not None:
                traced = TAINT if star.arg in facts.tainted_params else 0
                self.env[star.arg] = CONTAINER | FRESH | traced

    # -- driver ----------------------------------------------------------------------------------

    def run(self) -> FunctionFacts:
        func = self.facts.func
        if isinstance(func, ast.Lambda):
            self.facts.returns = self.expr(func.body)
        else:
            for default in (*func.args.defaults, *(d for d in func.args.kw_defaults if d is not None)):
                self.expr(default)
            self.block(func.body)
        self.facts.local_names = set(self.env) | self.bound
        return self.facts

    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def _branches(self, *bodies: list[ast.stmt]) -> None:
        before = self.env
        merged: dict[str, int] | None = None
        for body in bodies:
            self.env = dict(before)
            self.block(body)
            merged = self.env if merged is None else merge_env(merged, self.env)
        self.env = merged if merged is not None else before

    def _if(self, node: ast.If) -> None:
        """Branches, with ``isinstance`` narrowing and early exits (``if x is None: return``)."""
        known = self.constant(node.test)
        if known is None:
            known = eager_only_branch(self, node.test)
        if known is not None:  # `if training:` with training bound to a constant: one live branch
            self.block(node.body if known else node.orelse)
            return
        positive, negative = narrowed_names(node.test)
        before = self.env
        self.env = self._narrow(dict(before), positive)
        self.block(node.body)
        env_body = self.env
        self.env = self._narrow(dict(before), negative)
        self.block(node.orelse)
        env_else = self.env
        if exits(node.body):
            self.env = env_else
        elif node.orelse and exits(node.orelse):
            self.env = env_body
        else:
            self.env = merge_env(env_body, env_else)

    def _narrow(self, env: dict[str, int], names: set[str]) -> dict[str, int]:
        for name in names:
            env[name] = self.name_flags(name) & ~(TAINT | ARRAY)
        return env

    def _loop(self, body: list[ast.stmt], bind: Callable[[], None] | None = None) -> None:
        for _ in range(2):
            before = dict(self.env)
            if bind is not None:
                bind()
            self.block(body)
            self.env = merge_env(before, self.env)
            if self.env == before:
                break

    # -- statements ------------------------------------------------------------------------------

    def stmt(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Expr):
            self.expr(node.value)
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.assign(target, value, node.value)
        elif isinstance(node, ast.AugAssign):
            value = self.expr(node.value)
            target = node.target
            if isinstance(target, ast.Name):
                old = self.name_flags(target.id)
                self.flags[id(target)] = old
                kind = old & (CONTAINER | FRESH)
                self.bind(target.id, ((old | value) & (TAINT | ARRAY)) | kind)
            else:
                self.assign(target, value, None)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.expr(node.value), node.value)
            elif isinstance(node.target, ast.Name):
                self.bind(node.target.id, self.env.get(node.target.id, 0))
        elif isinstance(node, ast.Return):
            if node.value is not None:
                self.facts.returns |= self.expr(node.value)
                self._record_return(node.value)
        elif isinstance(node, ast.If):
            self.expr(node.test)
            self._if(node)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            iter_flags = self.expr(node.iter)
            keys = iter_flags & TAINT and iterates_keys(node.iter, self.mappings, node.body, node.target)
            element = 0 if keys else self.element_flags(node.iter, iter_flags)
            self._loop(node.body, lambda: self.assign(node.target, element, None, element_of=node.iter))
            self.block(node.orelse)
        elif isinstance(node, ast.While):
            self.expr(node.test)
            self._loop(node.body, lambda: self._eval(node.test))
            self.block(node.orelse)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                flags = self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, (flags & TAINT) | FRESH, None)
            self.block(node.body)
        elif isinstance(node, (ast.Try, ast.TryStar)):
            self.block(node.body)
            if any(_catches_concretization(h.type) for h in node.handlers):
                self._handled(node.body)
            bodies = [h.body for h in node.handlers]
            for handler in node.handlers:
                if handler.name:
                    self.bind(handler.name, FRESH)
            self._branches(node.orelse, *bodies)
            self.block(node.finalbody)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for dec in getattr(node, "decorator_list", ()):
                self.expr(dec)
            for default in (*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)):
                self.expr(default)
            self._closure(node)
            if not isinstance(node, ast.Lambda):
                self.bind(node.name, FRESH)  # made by this call: `g.__signature__ = ...` is harmless
        elif isinstance(node, ast.ClassDef):
            self.bind(node.name, FRESH)
        elif isinstance(node, ast.Global):
            self.facts.globals_declared.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            self.facts.nonlocals_declared.update(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports = nm.ImportMap()
            imports.add_import(node, self.index.module, self.index.is_package)
            self.facts.local_aliases.update(imports.aliases)
        elif isinstance(node, ast.Match):
            subject = self.expr(node.subject)
            bodies = []
            for case in node.cases:
                for sub in ast.walk(case.pattern):
                    bound = getattr(sub, "name", None)
                    if isinstance(bound, str):
                        self.bind(bound, subject & (TAINT | ARRAY))
                if case.guard is not None:
                    self.expr(case.guard)
                bodies.append(case.body)
            self._branches(*bodies)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if not isinstance(target, ast.Name):
                    self.expr(target)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.expr(child)

    def _record_return(self, value: ast.expr) -> None:
        facts = self.facts
        if isinstance(value, ast.Constant) and value.value is None:
            return
        if not isinstance(value, ast.Tuple) or any(isinstance(e, ast.Starred) for e in value.elts):
            facts.mixed_returns = True
            return
        elts = [self.flags.get(id(e), 0) for e in value.elts]
        if facts.return_elts is None:
            facts.return_elts = elts
        elif len(facts.return_elts) == len(elts):
            facts.return_elts = [a | b for a, b in zip(facts.return_elts, elts, strict=True)]
        else:
            facts.mixed_returns = True

    def _handled(self, body: list[ast.stmt]) -> None:
        """``try: ... except ConcretizationTypeError:``: the author handles the traced case, so values in
        the body are not reported as certainly traced (they may still taint what they flow into)."""
        for stmt in body:
            for sub in ast.walk(stmt):
                flags = self.flags.get(id(sub))
                if flags is not None and flags & ARRAY:
                    self.flags[id(sub)] = flags & ~ARRAY

    def _eval(self, node: ast.expr) -> None:
        self.expr(node)

    def bind(self, name: str, flags: int) -> None:
        self.env[name] = flags
        self.bound.add(name)

    def _closure(self, node: FuncNode) -> None:
        seen = self.facts.closures.get(id(node))
        self.facts.closures[id(node)] = dict(self.env) if seen is None else merge_env(seen, self.env)

    # -- assignment ------------------------------------------------------------------------------

    def assign(
        self, target: ast.expr, flags: int, value: ast.expr | None, element_of: ast.expr | None = None
    ) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, flags)
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = self._unpack(target, flags, value, element_of)
            for elt, part in zip(target.elts, parts, strict=False):
                self.assign(elt, part, None)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, CONTAINER | FRESH | (flags & TAINT), None)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            base = self.expr(target.value)
            if isinstance(target, ast.Subscript):
                self.expr(target.slice)
            root = target.value
            if isinstance(root, ast.Name) and root.id in self.env and base & (CONTAINER | FRESH):
                self.env[root.id] |= flags & TAINT

    def _unpack(
        self, target: ast.Tuple | ast.List, flags: int, value: ast.expr | None, element_of: ast.expr | None
    ) -> list[int]:
        n = len(target.elts)
        plain = isinstance(value, (ast.Tuple, ast.List)) and not any(
            isinstance(e, ast.Starred) for e in value.elts
        )
        if plain and len(value.elts) == n:  # type: ignore[union-attr]
            return [self.flags.get(id(e), 0) for e in value.elts]  # type: ignore[union-attr]
        if value is not None and id(value) in self.facts.tuple_flags:
            elts = self.facts.tuple_flags[id(value)]
            if len(elts) == n:
                return list(elts)
        if (
            element_of is not None
            and isinstance(element_of, ast.Call)
            and isinstance(element_of.func, ast.Name)
        ):
            fname = element_of.func.id
            if fname == "enumerate" and n == 2 and element_of.args:
                inner = self.flags.get(id(element_of.args[0]), 0)
                return [0, self.element_flags(element_of.args[0], inner)]
            if fname == "zip" and len(element_of.args) == n:
                return [self.element_flags(a, self.flags.get(id(a), 0)) for a in element_of.args]
        if (
            (
                element_of is not None
                and isinstance(element_of, ast.Call)
                and isinstance(element_of.func, ast.Attribute)
            )
            and element_of.func.attr == "items"
            and n == 2
        ):
            base = self.flags.get(id(element_of.func.value), 0)
            return [0, base & (TAINT | FRESH)]
        if element_of is not None and isinstance(element_of, (ast.Tuple, ast.List)):
            rows = [e for e in element_of.elts if isinstance(e, (ast.Tuple, ast.List))]
            if len(rows) == len(element_of.elts) and all(len(r.elts) == n for r in rows):
                parts = [0] * n
                for row in rows:
                    for i, e in enumerate(row.elts):
                        parts[i] |= self.flags.get(id(e), 0)
                return parts
        element = flags & (TAINT | ARRAY)
        if flags & FRESH:
            element |= FRESH
        return [element] * n

    @cached_property
    def mappings(self) -> frozenset[str]:
        return dict_names(self.facts.func)

    def element_flags(self, iterable: ast.expr, flags: int) -> int:
        """Flags of one element when iterating ``iterable``."""
        if flags & TAINT and iterates_keys(iterable, self.mappings):
            return 0
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            if iterable.func.id == "range":
                return TAINT if flags & TAINT else 0
            if iterable.func.id in ("enumerate", "zip"):
                return (flags & TAINT) | FRESH
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr == "keys"
        ):
            return 0
        if isinstance(iterable, (ast.Tuple, ast.List)) and not any(
            isinstance(e, ast.Starred) for e in iterable.elts
        ):
            # a literal built here: its elements are exactly what it was built from
            out = 0
            for elt in iterable.elts:
                out |= self.flags.get(id(elt), 0)
            return out & (TAINT | ARRAY | CONTAINER | FRESH | ELEMS)
        if flags & (ARRAY | ELEMS):
            return TAINT | ARRAY if flags & TAINT else ARRAY
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr in ("values", "items")
        ):
            # `for site in trace.values()`: parts of a value made in this call are fresh too
            return (flags & TAINT) | (self.flags.get(id(iterable.func.value), 0) & FRESH)
        return flags & TAINT

    # -- names -----------------------------------------------------------------------------------

    def name_flags(self, name: str) -> int:
        if name in self.env:
            return self.env[name]
        return self.facts.closure.get(name, 0)

    def is_local(self, name: str) -> bool:
        return name in self.env or name in self.facts.closure


#: errors JAX raises when traced code needs a concrete value
_CONCRETIZATION_ERRORS = (
    "ConcretizationTypeError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerArrayConversionError",
    "NonConcreteBooleanIndexError",
)


def _catches_concretization(handler: ast.expr | None) -> bool:
    if handler is None:
        return False
    items = handler.elts if isinstance(handler, ast.Tuple) else [handler]
    return any(nm.last_name(item) in _CONCRETIZATION_ERRORS for item in items)
