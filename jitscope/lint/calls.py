"""Calls inside a traced function: what they return and where they lead.

Part of the taint pass (``taint.TaintAnalyzer`` mixes this in). A call is either
static (``len``, ``isinstance``, ``jnp.shape``), a JAX array producer (``jnp.*``,
``lax.*``: a tracer inside traced code), a call into a function of this module (an
edge the analysis follows, with a summary of what it returns), a call into another
module of the linted tree (an external reference the runner resolves), or unknown
(traced when any argument is). Functions passed as arguments (``lax.scan(body,
...)``, ``tree_map(f, x)``) become edges too; host callbacks are not traced.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from jitscope.lint import names as nm
from jitscope.lint.discovery import ExternalRef, ResolvedFunction, positional_params, traced_params
from jitscope.lint.index import FuncNode, ModuleIndex

if TYPE_CHECKING:
    from jitscope.lint.taint import FunctionFacts, Summarizer

TAINT, ARRAY, CONTAINER, FRESH = 1, 2, 4, 8

_STATIC_BUILTINS = frozenset(
    {"len", "isinstance", "issubclass", "type", "id", "callable", "hasattr", "repr", "str", "hash", "bool", "int",
     "float", "complex", "range", "print", "format", "ord", "chr", "vars", "dir", "super", "object", "setattr",
     "delattr", "open", "input", "globals", "locals"}
)  # fmt: skip
_CONTAINER_BUILTINS = frozenset({"list", "tuple", "dict", "set", "frozenset", "sorted", "reversed", "zip", "enumerate", "map", "filter"})
_CONCRETE_METHODS = frozenset({"item", "tolist", "__bool__", "__int__", "__float__", "__index__", "__len__", "keys"})
MUTATORS = frozenset(
    {"append", "extend", "insert", "update", "add", "discard", "remove", "pop", "popitem", "clear", "setdefault",
     "sort", "reverse", "appendleft", "extendleft", "put"}
)  # fmt: skip
_EXTERNAL_SKIP = frozenset({"jax", "jaxlib", "numpy", "scipy", "equinox", "flax", "optax", "chex", "typing"}) | frozenset(
    sys.stdlib_module_names
)


class CallEvaluator:
    """Mixin for ``TaintAnalyzer``: evaluation of ``ast.Call`` nodes."""

    index: ModuleIndex
    facts: FunctionFacts
    env: dict[str, int]
    flags: dict[int, int]
    summarize: Summarizer | None

    if TYPE_CHECKING:

        def expr(self, node: ast.expr) -> int: ...

        def name_flags(self, name: str) -> int: ...

    def qualify(self, node: ast.expr) -> str | None:
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.env and root.id not in self.facts.local_aliases:
            return None  # a local variable, not an import
        return self.index.names.qualify(node, self.facts.local_aliases or None)

    def call(self, node: ast.Call) -> int:  # noqa: C901 - one dispatch over call kinds
        func = node.func
        base = 0
        if isinstance(func, ast.Attribute):
            base = self.expr(func.value)
        elif not isinstance(func, ast.Name):
            self.expr(func)
        positional = [(self.expr(a), isinstance(a, ast.Starred)) for a in node.args]
        keywords = [(k.arg, self.expr(k.value)) for k in node.keywords]
        any_taint = 0
        for f, _ in positional:
            any_taint |= f
        for _, f in keywords:
            any_taint |= f
        any_taint &= TAINT
        qualified = self.qualify(func) if isinstance(func, (ast.Name, ast.Attribute)) else None

        if isinstance(func, ast.Name) and qualified is None and not self._is_bound(func.id):
            name = func.id
            if name in _STATIC_BUILTINS:
                return 0
            if name == "getattr" and len(node.args) >= 2:
                attr = node.args[1]
                if isinstance(attr, ast.Constant) and attr.value in nm.STATIC_ATTRS:
                    return 0
                return positional[0][0] & (TAINT | ARRAY)
            if name in _CONTAINER_BUILTINS:
                self._callbacks(node, any_taint, None)
                return any_taint | CONTAINER | FRESH
        resolved = self.resolve(func) if qualified is None else None
        if isinstance(resolved, ResolvedFunction):
            tainted = self.map_arguments(resolved, node, positional, keywords)
            self._edge(resolved, tainted, False, f"called from `{self.facts.qualname}`")
            self._callbacks(node, any_taint, None)
            if self.summarize is not None:
                closure = self.env if resolved.owner is self.facts.func else {}
                flags, elts = self.summarize(resolved.func, tainted, closure)
                if elts is not None:
                    self.facts.tuple_flags[id(node)] = elts
                return flags
            return any_taint | FRESH
        if qualified is not None:
            return self._qualified_call(node, qualified, positional, keywords, any_taint)
        self._callbacks(node, any_taint, None)
        if isinstance(func, ast.Attribute):
            method = func.attr
            if isinstance(func.value, ast.Constant):
                return 0
            if method in _CONCRETE_METHODS:
                return 0
            if method == "copy":
                return base | FRESH
            if method in MUTATORS:
                root = func.value
                if isinstance(root, ast.Name) and root.id in self.env:
                    self.env[root.id] |= any_taint
                return (base & TAINT) if method in ("pop", "setdefault") else 0
            return ((base | any_taint) & TAINT) | (base & ARRAY) | FRESH
        return any_taint | FRESH

    def _qualified_call(
        self,
        node: ast.Call,
        qualified: str,
        positional: list[tuple[int, bool]],
        keywords: list[tuple[str | None, int]],
        any_taint: int,
    ) -> int:
        if nm.is_host_callback(qualified):
            return TAINT | ARRAY | FRESH
        kind = nm.classify_transform(qualified)
        if kind is not None:
            self._callbacks(node, TAINT, kind)
            return 0
        jax_family = nm.is_jax_name(qualified)
        if nm.is_body_taker(qualified) or nm.is_tracing_caller(qualified):
            self._callbacks(node, TAINT, "body")
        elif jax_family:
            self._callbacks(node, 0, None)
        if nm.is_static_result(qualified):
            return 0
        if nm.is_array_producer(qualified):
            return TAINT | ARRAY | FRESH
        root = qualified.partition(".")[0]
        if root == "numpy":
            return (any_taint | FRESH) if any_taint else FRESH
        if root == "math":
            return 0
        if not jax_family:
            if qualified != "functools.partial":
                self._callbacks(node, any_taint, None)
            if root not in _EXTERNAL_SKIP:
                self.facts.external.append(
                    ExternalRef(
                        qualified,
                        f"called from `{self.facts.qualname}`",
                        tuple(bool(f & TAINT) for f, _ in positional),
                        frozenset(k for k, f in keywords if k and f & TAINT),
                        all_tainted=any(star and f & TAINT for f, star in positional),
                    )
                )
        return any_taint | FRESH

    # -- resolution ------------------------------------------------------------------------------

    def _is_bound(self, name: str) -> bool:
        return name in self.env or name in self.facts.closure or name in self.index.module_values

    def resolve(self, expr: ast.expr) -> ResolvedFunction | str | None:
        """A function in this module that ``expr`` names, seen from inside this function."""
        index = self.index
        if isinstance(expr, ast.Lambda):
            index.owner.setdefault(id(expr), self.facts.func)
            index.qualname.setdefault(id(expr), f"{self.facts.qualname}.<lambda>")
            return ResolvedFunction(expr, self.facts.func)
        if isinstance(expr, ast.Call) and isinstance(expr.func, (ast.Name, ast.Attribute)):
            if self.qualify(expr.func) == "functools.partial" and expr.args:
                inner = self.resolve(expr.args[0])
                if isinstance(inner, ResolvedFunction):
                    inner.bound_args = tuple(expr.args[1:])
                    inner.bound_keywords = frozenset(k.arg for k in expr.keywords if k.arg)
                return inner
            return None
        if isinstance(expr, ast.Name):
            func: FuncNode | None = self.facts.func
            while func is not None:
                found = index.local_defs(func).get(expr.id)
                if found is not None:
                    return ResolvedFunction(found, func)
                if func is not self.facts.func and expr.id in _params(func):
                    return None
                func = index.owner.get(id(func))
            if expr.id in self.env and expr.id not in self.facts.local_aliases:
                return None
            if expr.id in index.defs:
                return ResolvedFunction(index.defs[expr.id], None)
            return None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            method_owner = self._method_for_self(expr.value.id)
            if method_owner is not None:
                found_method = index.methods.get(id(method_owner), {}).get(expr.attr)
                if found_method is None:
                    found_method = _class_methods(method_owner).get(expr.attr)
                if found_method is not None:
                    index.method_class.setdefault(id(found_method), method_owner)
                    index.qualname.setdefault(id(found_method), f"{method_owner.name}.{expr.attr}")
                    return ResolvedFunction(found_method, None, bound_method=True)
            cls = index.classes.get(expr.value.id)
            if cls is not None and not self._is_local_var(expr.value.id):
                found_method = index.methods.get(id(cls), {}).get(expr.attr)
                if found_method is not None:
                    return ResolvedFunction(found_method, None)
        return None

    def _is_local_var(self, name: str) -> bool:
        return name in self.env or name in self.facts.closure

    def _method_for_self(self, name: str) -> ast.ClassDef | None:
        func: FuncNode | None = self.facts.func
        while func is not None:
            cls = self.index.method_class.get(id(func))
            if cls is not None:
                params = positional_params(func)
                return cls if params and params[0] == name else None
            func = self.index.owner.get(id(func))
        return None

    def map_arguments(
        self,
        resolved: ResolvedFunction,
        node: ast.Call | None,
        positional: list[tuple[int, bool]],
        keywords: list[tuple[str | None, int]],
    ) -> frozenset[str]:
        """Parameters of the callee that receive traced values at this call."""
        callee = resolved.func
        names = positional_params(callee)
        if resolved.bound_method and names:
            names = names[1:]
        bound = [(self.flags.get(id(a), 0), isinstance(a, ast.Starred)) for a in resolved.bound_args]
        items = [*bound, *positional]
        args = callee.args
        tainted: set[str] = set()
        for i, (f, starred) in enumerate(items):
            if starred:
                if f & TAINT:
                    tainted.update(names[i:])
                    if args.vararg:
                        tainted.add(args.vararg.arg)
                break
            if i < len(names):
                if f & TAINT:
                    tainted.add(names[i])
            elif args.vararg is not None and f & TAINT:
                tainted.add(args.vararg.arg)
        known = set(names) | {a.arg for a in args.kwonlyargs}
        for key, f in keywords:
            if not f & TAINT:
                continue
            if key is None:
                tainted.update(known)
                if args.kwarg:
                    tainted.add(args.kwarg.arg)
            elif key in known:
                tainted.add(key)
            elif args.kwarg is not None:
                tainted.add(args.kwarg.arg)
        return frozenset(tainted)

    def _edge(self, resolved: ResolvedFunction, tainted: frozenset[str], boundary: bool, reason: str) -> None:
        from jitscope.lint.taint import CallEdge

        self.facts.edges.append(CallEdge(resolved.func, resolved.owner, tainted, boundary, reason))

    def _callbacks(self, node: ast.Call, taint: int, kind: str | None) -> None:
        """Functions passed as arguments: traced with the call (a transform traces them anew)."""
        label = _label(node.func)
        for arg in (*node.args, *(k.value for k in node.keywords)):
            items: list[Any] = list(arg.elts) if isinstance(arg, (ast.List, ast.Tuple)) and kind else [arg]
            for item in items:
                if not isinstance(item, (ast.Lambda, ast.Name, ast.Attribute, ast.Call)):
                    continue
                resolved = self.resolve(item)
                if not isinstance(resolved, ResolvedFunction):
                    continue
                if kind is not None:
                    keywords = {k.arg: k.value for k in node.keywords if k.arg}
                    tainted = traced_params(self.index, resolved.func, kind, keywords, resolved.bound_method,
                                            len(resolved.bound_args), resolved.bound_keywords)  # fmt: skip
                    self._edge(resolved, tainted, True, f"passed to {label} in `{self.facts.qualname}`")
                else:
                    tainted = frozenset(_params(resolved.func)) if taint & TAINT else frozenset()
                    if tainted:
                        first = positional_params(resolved.func)
                        skip = set(first[: int(resolved.bound_method) + len(resolved.bound_args)])
                        tainted = tainted - skip - resolved.bound_keywords
                    self._edge(resolved, tainted, False, f"passed to {label} in `{self.facts.qualname}`")


def _params(func: FuncNode) -> list[str]:
    args = func.args
    out = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    out.extend(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    return out


def _class_methods(cls: ast.ClassDef) -> dict[str, FuncNode]:
    return {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _label(func: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts)) or "a call"
