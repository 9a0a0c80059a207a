"""Transforms in the taint pass that trace only some arguments of their function.

``jax.grad``/``value_and_grad``/``jacfwd``/``jacrev``/``hessian`` trace the arguments they
differentiate (``argnums``, 0 by default) and ``jax.vmap`` those it maps (``in_axes`` not None).
The other arguments stay what the caller passes: ``jax.value_and_grad(loss)(x, n_heads)`` inside a
jitted step gives ``loss`` a traced ``n_heads`` only when the step passes a traced one.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jitscope.linter.analysis import qualified_names as nm
from jitscope.linter.analysis.function_refs import ResolvedFunction
from jitscope.linter.analysis.parameters import positional_params, transformed_params
from jitscope.linter.analysis.taint_flags import ARRAY, FRESH, TAINT, CallEdge, FunctionFacts


class TransformCalls:
    """Mixin for ``CallEvaluator``: grad-family transforms and vmap applied to a function of this module."""

    facts: FunctionFacts
    flags: dict[int, int]

    if TYPE_CHECKING:

        def expr(self, node: ast.expr) -> int: ...

        def qualify(self, node: ast.expr) -> str | None: ...

        def resolve(self, expr: ast.expr) -> ResolvedFunction | str | None: ...

        def map_arguments(
            self,
            resolved: ResolvedFunction,
            node: ast.Call | None,
            positional: list[tuple[int, bool]],
            keywords: list[tuple[str | None, int]],
        ) -> tuple[frozenset[str], frozenset[str]]: ...

    # -- transforms called at once: ``jax.value_and_grad(loss)(x, n)`` --------------------------

    def _transformed(self, func: ast.expr) -> tuple[ast.Call, str, ResolvedFunction] | None:
        """``T(f, ...)`` for a grad-family transform or vmap T and a function f of this module."""
        if not isinstance(func, ast.Call) or not func.args:
            return None
        if not isinstance(func.func, (ast.Name, ast.Attribute)):
            return None
        short = nm.mapping_transform(self.qualify(func.func))
        if short is None:
            return None
        resolved = self.resolve(func.args[0])
        if not isinstance(resolved, ResolvedFunction):
            return None
        return func, short, resolved

    def _differentiated(self, node: ast.Call, short: str) -> None:
        """``g = jax.grad(loss)`` called later: the differentiated parameters hold tracers; what the
        others hold depends on the later call, not known here."""
        resolved = self.resolve(node.args[0]) if node.args else None
        if not isinstance(resolved, ResolvedFunction):
            return
        names = positional_params(resolved.func)
        skip = int(resolved.bound_method) + len(resolved.bound_args)
        own = transformed_params(names[skip:], short, {k.arg: k.value for k in node.keywords if k.arg})
        reason = f"differentiated by {label_of(node.func)} in `{self.facts.qualname}`"
        self.facts.edges.append(CallEdge(resolved.func, resolved.owner, own, own, True, reason, "body"))

    def _call_transformed(
        self,
        node: ast.Call,
        transformed: tuple[ast.Call, str, ResolvedFunction],
        positional: list[tuple[int, bool]],
        keywords: list[tuple[str | None, int]],
    ) -> int:
        """``grad``/``value_and_grad``/``jacfwd``... trace only the arguments they differentiate
        (``argnums``, 0 by default) and ``vmap`` only those it maps (``in_axes`` not None): the other
        arguments are what the caller passes, so the callee gets the caller's flags for them."""
        inner, short, resolved = transformed
        for arg in (*inner.args, *(k.value for k in inner.keywords)):
            if not isinstance(arg, (ast.Name, ast.Attribute, ast.Lambda)):
                self.expr(arg)
        options = {k.arg: k.value for k in inner.keywords if k.arg}
        if short == "vmap" and len(inner.args) >= 2:
            options.setdefault("in_axes", inner.args[1])
        names = positional_params(resolved.func)
        skip = int(resolved.bound_method) + len(resolved.bound_args)
        own = transformed_params(names[skip:], short, options) - resolved.bound_keywords
        tainted, arrays = self.map_arguments(resolved, node, positional, keywords)
        bound = inner.args[0]
        if isinstance(bound, ast.Call):  # partial(f, n=n): n is what the caller binds
            for kw in bound.keywords:
                if kw.arg in resolved.bound_keywords and self.flags.get(id(kw.value), 0) & TAINT:
                    tainted |= {kw.arg}
        certain = tainted <= own or self.facts.boundary
        label = label_of(inner.func)
        if tainted <= own:
            how = "differentiated by" if short != "vmap" else "mapped by"
            reason = f"{how} {label} in `{self.facts.qualname}`"
        else:
            reason = f"called through {label} by `{self.facts.qualname}`, which passes it traced values"
        tainted, arrays = tainted | own, arrays | own
        self.facts.edges.append(
            CallEdge(
                resolved.func,
                resolved.owner,
                tainted,
                arrays,
                certain,
                reason,
                "body" if certain else "callee",
            )
        )
        return TAINT | ARRAY | FRESH  # gradients, values and mapped results are traced arrays


def label_of(func: ast.expr) -> str:
    """``jax.value_and_grad`` as spelled at the call."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts)) or "a call"
