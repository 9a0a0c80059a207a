"""Which function a call inside a traced function reaches, and which of its parameters get
traced values: a mixin of :class:`jitscope.linter.analysis.taint_calls.CallEvaluator`.

``resolve`` names the function of this module an expression refers to from inside the
function being analysed (a nested def, a module-level def, a method through ``self``, a
lambda, a ``functools.partial`` of one); ``map_arguments`` maps a call's argument flags onto
the callee's parameters (``*args`` fills the parameters not passed by name).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jitscope.linter.analysis.function_refs import ResolvedFunction, attribute_class, class_method
from jitscope.linter.analysis.module_index import FuncNode, ModuleIndex
from jitscope.linter.analysis.parameters import (
    all_params,
    partial_constants,
    partial_keywords,
    positional_params,
)
from jitscope.linter.analysis.taint_flags import ARRAY, ELEMS, TAINT, FunctionFacts


class CallResolution:
    """Resolution of callees and mapping of arguments to parameters (see the module docstring)."""

    index: ModuleIndex
    facts: FunctionFacts
    env: dict[str, int]
    flags: dict[int, int]

    if TYPE_CHECKING:

        def qualify(self, node: ast.expr) -> str | None: ...

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
                    inner.bound_keywords = partial_keywords(inner.func, expr)
                    inner.constants = partial_constants(expr)
                return inner
            return None
        if isinstance(expr, ast.Name):
            func: FuncNode | None = self.facts.func
            while func is not None:
                found = index.local_defs(func).get(expr.id)
                if found is not None:
                    return ResolvedFunction(found, func)
                if func is not self.facts.func and expr.id in all_params(func):
                    return None
                func = index.owner.get(id(func))
            if expr.id in self.env and expr.id not in self.facts.local_aliases:
                return None
            if expr.id in index.defs:
                return ResolvedFunction(index.defs[expr.id], None)
            return None
        held = self._held_method(expr)
        if held is not None:
            cls, name = held
            if not isinstance(cls, ast.ClassDef):
                return None
            method = class_method(index, cls, name)
            return ResolvedFunction(method, None, bound_method=True) if method is not None else None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            method_owner = self._method_for_self(expr.value.id)
            if method_owner is not None:
                found_method: FuncNode | None = index.methods.get(id(method_owner), {}).get(expr.attr)
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

    def _held_method(self, expr: ast.expr) -> tuple[ast.ClassDef | str, str] | None:
        """(class, method) that ``self.reward_fn`` (called: ``__call__``) or ``self.estimator.update``
        reaches when the class says what ``self.reward_fn`` / ``self.estimator`` holds
        (see :func:`attribute_class`), else None. A plain method ``self.update`` is not one."""
        if not isinstance(expr, ast.Attribute):
            return None
        if isinstance(expr.value, ast.Name):
            holder, attr, name = expr.value.id, expr.attr, "__call__"
        elif isinstance(expr.value, ast.Attribute) and isinstance(expr.value.value, ast.Name):
            holder, attr, name = expr.value.value.id, expr.value.attr, expr.attr
        else:
            return None
        owner = self._method_for_self(holder)
        if owner is None or (name == "__call__" and class_method(self.index, owner, attr) is not None):
            return None
        held = attribute_class(self.index, owner, attr)
        return (held, name) if held is not None else None

    def held_callee(self, expr: ast.expr) -> str | None:
        """``pkg.rewards.RewardFn.__call__`` for ``self.reward_fn(...)`` when ``self.reward_fn`` holds
        an object of a class of another module (and likewise ``self.estimator.update(...)``)."""
        held = self._held_method(expr)
        return f"{held[0]}.{held[1]}" if held is not None and isinstance(held[0], str) else None

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
    ) -> tuple[frozenset[str], frozenset[str]]:
        """Parameters of the callee that receive traced values at this call, and those that receive arrays."""
        callee = resolved.func
        names = positional_params(callee)
        if resolved.bound_method and names:
            names = names[1:]
        bound = [(self.flags.get(id(a), 0), isinstance(a, ast.Starred)) for a in resolved.bound_args]
        items = [*bound, *positional]
        args = callee.args
        tainted: set[str] = set()
        arrays: set[str] = set()

        def mark(params: list[str], f: int) -> None:
            if f & TAINT:
                tainted.update(params)
                if f & (ARRAY | ELEMS):
                    arrays.update(params)

        by_keyword = {key for key, _ in keywords if key} | resolved.bound_keywords
        for i, (f, starred) in enumerate(items):
            if starred:
                # `f(*args, log_space=flag)`: the unpacked values fill the parameters not passed by name
                rest = [n for n in names[i:] if n not in by_keyword]
                mark(rest + ([args.vararg.arg] if args.vararg else []), f)
                break
            if i < len(names):
                mark([names[i]], f)
            elif args.vararg is not None:
                mark([args.vararg.arg], f)
        known = set(names) | {a.arg for a in args.kwonlyargs}
        for key, f in keywords:
            if key is None:
                mark([*known, *([args.kwarg.arg] if args.kwarg else [])], f)
            elif key in known:
                mark([key], f)
            elif args.kwarg is not None:
                mark([args.kwarg.arg], f)
        return frozenset(tainted), frozenset(arrays)


def _class_methods(cls: ast.ClassDef) -> dict[str, FuncNode]:
    return {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
