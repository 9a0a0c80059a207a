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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from jitscope.lint import names as nm
from jitscope.lint.calls import CallEvaluator
from jitscope.lint.index import FuncNode, ModuleIndex

TAINT = 1
ARRAY = 2
CONTAINER = 4
FRESH = 8

_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)

#: (function, traced parameters, closure flags) -> (flags of the return value, per-element flags of a tuple)
Summarizer = Callable[[FuncNode, frozenset[str], Mapping[str, int]], tuple[int, tuple[int, ...] | None]]


@dataclass(slots=True)
class CallEdge:
    """A function this one calls (or hands to a transform) and the parameters that get traced values."""

    callee: FuncNode
    owner: FuncNode | None
    tainted: frozenset[str]
    boundary: bool
    reason: str


@dataclass(slots=True)
class FunctionFacts:
    """What the taint pass learned about one traced function."""

    func: FuncNode
    qualname: str
    reason: str
    boundary: bool
    tainted_params: frozenset[str]
    self_name: str | None
    flags: dict[int, int] = field(default_factory=dict)
    local_names: set[str] = field(default_factory=set)
    closure: Mapping[str, int] = field(default_factory=dict)
    comp_names: set[str] = field(default_factory=set)
    globals_declared: set[str] = field(default_factory=set)
    nonlocals_declared: set[str] = field(default_factory=set)
    local_aliases: dict[str, str] = field(default_factory=dict)
    edges: list[CallEdge] = field(default_factory=list)
    external: list[object] = field(default_factory=list)
    closures: dict[int, dict[str, int]] = field(default_factory=dict)
    returns: int = 0
    #: per-element flags when every ``return`` returns a tuple of the same length
    return_elts: list[int] | None = None
    mixed_returns: bool = False
    #: call node id -> per-element flags of the tuple it returns
    tuple_flags: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def flags_of(self, node: ast.AST) -> int:
        return self.flags.get(id(node), 0)

    def is_traced(self, node: ast.AST) -> bool:
        return bool(self.flags.get(id(node), 0) & TAINT)


def merge_env(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, value in b.items():
        out[key] = out.get(key, 0) | value
    return out


class TaintAnalyzer(CallEvaluator):
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
        args = func.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            self.env[a.arg] = (TAINT | ARRAY) if a.arg in facts.tainted_params else 0
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
        self.facts.local_names = set(self.env)
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
        positive, negative = narrowed_names(node.test)
        before = self.env
        self.env = self._narrow(dict(before), positive)
        self.block(node.body)
        env_body = self.env
        self.env = self._narrow(dict(before), negative)
        self.block(node.orelse)
        env_else = self.env
        if _exits(node.body):
            self.env = env_else
        elif node.orelse and _exits(node.orelse):
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

    def stmt(self, node: ast.stmt) -> None:  # noqa: C901 - one dispatch over statement kinds
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
                self.env[target.id] = ((old | value) & (TAINT | ARRAY)) | kind
            else:
                self.assign(target, value, None)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.expr(node.value), node.value)
            elif isinstance(node.target, ast.Name):
                self.env.setdefault(node.target.id, 0)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                self.facts.returns |= self.expr(node.value)
                self._record_return(node.value)
        elif isinstance(node, ast.If):
            self.expr(node.test)
            self._if(node)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            iter_flags = self.expr(node.iter)
            element = self.element_flags(node.iter, iter_flags)
            self._loop(node.body, lambda: self.assign(node.target, element, None, element_of=node.iter))
            self.block(node.orelse)
        elif isinstance(node, ast.While):
            self.expr(node.test)
            self._loop(node.body, lambda: self.expr(node.test) and None)
            self.block(node.orelse)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                flags = self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, (flags & TAINT) | FRESH, None)
            self.block(node.body)
        elif isinstance(node, (ast.Try, ast.TryStar)):
            self.block(node.body)
            bodies = [h.body for h in node.handlers]
            for handler in node.handlers:
                if handler.name:
                    self.env[handler.name] = FRESH
            self._branches(node.orelse, *bodies)
            self.block(node.finalbody)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for dec in getattr(node, "decorator_list", ()):
                self.expr(dec)
            for default in (*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)):
                self.expr(default)
            self._closure(node)
            if not isinstance(node, ast.Lambda):
                self.env[node.name] = 0
        elif isinstance(node, ast.ClassDef):
            self.env[node.name] = 0
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
                        self.env[bound] = subject & (TAINT | ARRAY)
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

    def _closure(self, node: FuncNode) -> None:
        seen = self.facts.closures.get(id(node))
        self.facts.closures[id(node)] = dict(self.env) if seen is None else merge_env(seen, self.env)

    # -- assignment ------------------------------------------------------------------------------

    def assign(self, target: ast.expr, flags: int, value: ast.expr | None, element_of: ast.expr | None = None) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = flags
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

    def _unpack(self, target: ast.Tuple | ast.List, flags: int, value: ast.expr | None,
                element_of: ast.expr | None) -> list[int]:  # fmt: skip
        n = len(target.elts)
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == n:
            if not any(isinstance(e, ast.Starred) for e in value.elts):
                return [self.flags.get(id(e), 0) for e in value.elts]
        if value is not None and id(value) in self.facts.tuple_flags:
            elts = self.facts.tuple_flags[id(value)]
            if len(elts) == n:
                return list(elts)
        if element_of is not None and isinstance(element_of, ast.Call) and isinstance(element_of.func, ast.Name):
            fname = element_of.func.id
            if fname == "enumerate" and n == 2 and element_of.args:
                inner = self.flags.get(id(element_of.args[0]), 0)
                return [0, self.element_flags(element_of.args[0], inner)]
            if fname == "zip" and len(element_of.args) == n:
                return [self.element_flags(a, self.flags.get(id(a), 0)) for a in element_of.args]
        if element_of is not None and isinstance(element_of, ast.Call) and isinstance(element_of.func, ast.Attribute):
            if element_of.func.attr == "items" and n == 2:
                base = self.flags.get(id(element_of.func.value), 0)
                return [0, base & TAINT]
        element = flags & (TAINT | ARRAY)
        if flags & FRESH:
            element |= FRESH
        return [element] * n

    def element_flags(self, iterable: ast.expr, flags: int) -> int:
        """Flags of one element when iterating ``iterable``."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            if iterable.func.id == "range":
                return TAINT if flags & TAINT else 0
            if iterable.func.id in ("enumerate", "zip"):
                return (flags & TAINT) | FRESH
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute):
            if iterable.func.attr == "keys":
                return 0
        if flags & ARRAY:
            return TAINT | ARRAY if flags & TAINT else ARRAY
        return flags & TAINT

    # -- names -----------------------------------------------------------------------------------

    def name_flags(self, name: str) -> int:
        if name in self.env:
            return self.env[name]
        return self.facts.closure.get(name, 0)

    def is_local(self, name: str) -> bool:
        return name in self.env or name in self.facts.closure

    # -- expressions -----------------------------------------------------------------------------

    def expr(self, node: ast.expr) -> int:  # noqa: C901 - one dispatch over expression kinds
        flags = 0
        if isinstance(node, ast.Name):
            flags = self.name_flags(node.id)
        elif isinstance(node, ast.Constant):
            return 0
        elif isinstance(node, ast.Attribute):
            base = self.expr(node.value)
            if node.attr not in nm.STATIC_ATTRS:
                flags = base & (TAINT | ARRAY)
        elif isinstance(node, ast.Subscript):
            base = self.expr(node.value)
            index = self.expr(node.slice)
            flags = (base | (index & TAINT)) & (TAINT | ARRAY)
        elif isinstance(node, ast.Call):
            flags = self.call(node)
        elif isinstance(node, ast.BinOp):
            left = self.expr(node.left)
            right = self.expr(node.right)
            if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
                flags = 0
            else:
                flags = ((left | right) & (TAINT | ARRAY)) | FRESH
                if left & CONTAINER and right & CONTAINER:
                    flags |= CONTAINER
        elif isinstance(node, ast.UnaryOp):
            flags = self.expr(node.operand) & (TAINT | ARRAY)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                flags |= self.expr(value)
            flags &= TAINT | ARRAY | CONTAINER | FRESH
        elif isinstance(node, ast.Compare):
            flags = self._compare(node)
        elif isinstance(node, ast.IfExp):
            self.expr(node.test)
            flags = self.expr(node.body) | self.expr(node.orelse)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            for elt in node.elts:
                flags |= self.expr(elt)
            flags = (flags & TAINT) | CONTAINER | FRESH
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if key is not None:
                    self.expr(key)
            for value in node.values:
                flags |= self.expr(value)
            flags = (flags & TAINT) | CONTAINER | FRESH
        elif isinstance(node, _COMPS):
            flags = self._comprehension(node)
        elif isinstance(node, ast.Lambda):
            self._closure(node)
            return 0
        elif isinstance(node, ast.NamedExpr):
            flags = self.expr(node.value)
            self.assign(node.target, flags, node.value)
        elif isinstance(node, ast.JoinedStr):
            for value in node.values:
                self.expr(value)
            return 0
        elif isinstance(node, ast.FormattedValue):
            self.expr(node.value)
            return 0
        elif isinstance(node, ast.Starred):
            flags = self.expr(node.value)
        elif isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                if part is not None:
                    flags |= self.expr(part) & TAINT
        elif isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom)):
            if node.value is not None:
                flags = self.expr(node.value) & (TAINT | ARRAY)
        if flags:
            self.flags[id(node)] = self.flags.get(id(node), 0) | flags
        return flags

    def _compare(self, node: ast.Compare) -> int:
        left = self.expr(node.left)
        flags = left
        for comparator in node.comparators:
            flags |= self.expr(comparator)
        if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return 0
        if all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            return 0  # membership tests on Python containers; `x in array` is rare in traced code
        return TAINT | ARRAY if flags & TAINT else 0

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> int:
        saved = self.env
        self.env = dict(saved)
        for gen in node.generators:
            it = self.expr(gen.iter)
            before = set(self.env)
            self.assign(gen.target, self.element_flags(gen.iter, it), None, element_of=gen.iter)
            self.facts.comp_names.update(set(self.env) - before)
            for cond in gen.ifs:
                self.expr(cond)
        if isinstance(node, ast.DictComp):
            flags = self.expr(node.key) | self.expr(node.value)
        else:
            flags = self.expr(node.elt)
        self.env = saved
        return (flags & TAINT) | CONTAINER | FRESH


#: Calls whose truth proves their argument is a concrete Python/NumPy value (jax internals).
_CONCRETE_CHECKS = frozenset({"is_constant_dim", "is_constant_shape", "is_concrete", "is_python_scalar"})
_TRACED_TYPE_WORDS = ("Tracer", "Array", "Value", "Jaxpr")


def _static_type(node: ast.expr) -> bool:
    """True when ``isinstance(x, node)`` proves ``x`` is not a tracer."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    for item in items:
        name = item.attr if isinstance(item, ast.Attribute) else item.id if isinstance(item, ast.Name) else None
        if name is None or (any(w in name for w in _TRACED_TYPE_WORDS) and name != "ndarray"):
            return False
        if name == "ndarray" and isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name):
            if item.value.id in ("jnp", "jax"):
                return False
    return True


def narrowed_names(test: ast.expr) -> tuple[set[str], set[str]]:
    """Names proven concrete when ``test`` is true / when it is false."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        positive, negative = narrowed_names(test.operand)
        return negative, positive
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And):
            out: set[str] = set()
            for value in test.values:
                out |= narrowed_names(value)[0]
            return out, set()
        out = set()
        for value in test.values:
            out |= narrowed_names(value)[1]
        return set(), out
    if isinstance(test, ast.Call) and test.args:
        func = test.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "isinstance" and len(test.args) == 2 and isinstance(test.args[0], ast.Name):
            if _static_type(test.args[1]):
                return {test.args[0].id}, set()
        if name in _CONCRETE_CHECKS:
            return {a.id for a in test.args if isinstance(a, ast.Name)}, set()
    return set(), set()


def _exits(body: list[ast.stmt]) -> bool:
    """True when a block always leaves (return, raise, continue, break)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
