"""Applying a transform found by discovery: who is traced, with which parameters, and jit sites.

A mixin of :class:`jitscope.linter.analysis.discovery.Discoverer`. ``jax.jit(f, ...)``,
``partial(jax.jit, ...)(f)``, ``vmap``, ``nn.jit(Module)``...: the function it wraps becomes an
:class:`Entry` (its traced, defaulted and static parameters), a function of another module an
:class:`ExternalRef` for the runner, and a jit/pmap a :class:`JitSite` for the recompilation rules.
"""

from __future__ import annotations

import ast

from jitscope.linter.analysis import qualified_names as nm
from jitscope.linter.analysis.discovered import Discovery, Entry, ExternalRef, JitSite
from jitscope.linter.analysis.function_refs import (
    ResolvedFunction,
    innermost_function,
    loop_in_chain,
    resolve_function,
    short_label,
    target_label,
)
from jitscope.linter.analysis.module_index import DefNode, FuncNode, ModuleIndex
from jitscope.linter.analysis.parameters import (
    DEFAULTS_STATIC_KINDS,
    STATIC_KEYWORDS,
    all_params,
    defaulted_params,
    literal_ints,
    literal_strs,
    positional_params,
    traced_params,
)

#: Transforms whose jitted functions the recompilation rules (JS30x) inspect (``filter_jit``:
#: equinox's filter_jit, flax's nnx.jit, haliax's named_jit, which hold Python values static).
JIT_KINDS = frozenset({"jit", "pmap", "filter_jit"})


class TransformApplication:
    """Entries, external references and jit sites for one applied transform."""

    index: ModuleIndex
    out: Discovery

    def local_aliases(self, chain: list[ast.stmt]) -> dict[str, str] | None:
        raise NotImplementedError

    def _apply(
        self,
        kind: str,
        target_expr: ast.expr,
        call: ast.Call,
        keywords: dict[str, ast.expr],
        chain: list[ast.stmt],
        parent: ast.AST | None,
        in_comp: bool,
        label: str,
    ) -> None:
        resolved = resolve_function(self.index, target_expr, chain, self.local_aliases(chain))
        target: FuncNode | None = None
        bound_method = False
        reason = f"passed to {short_label(label)}()"
        defaults = kind in DEFAULTS_STATIC_KINDS
        if isinstance(resolved, ResolvedFunction):
            target, bound_method = resolved.func, resolved.bound_method
            everything = traced_params(
                self.index,
                target,
                kind,
                keywords,
                bound_method,
                len(resolved.bound_args),
                resolved.bound_keywords,
            )
            defaulted = defaulted_for(target, kind, everything)
            static = (
                frozenset(all_params(target))
                - everything
                - set(positional_params(target)[: len(resolved.bound_args)])
            )
            if kind == "vmap":
                # in_axes=None: not mapped, but whatever the caller passes (perhaps traced)
                static = frozenset()
            entry = Entry(
                target, reason, True, everything - defaulted, resolved.owner, defaulted, static, kind=kind
            )
            entry.constants = tuple(resolved.constants.items())
            self.out.entries.append(entry)
        elif label.startswith("flax.linen.") and isinstance(target_expr, ast.Name):
            self._lifted_module(target_expr.id, reason, kind)
        elif isinstance(resolved, str) and kind not in ("filter_jit", "filter_vmap"):
            nums_kw, names_kw = STATIC_KEYWORDS.get(kind, ("", ""))
            nums = literal_ints(keywords.get(nums_kw)) if nums_kw else ()
            names = literal_strs(keywords.get(names_kw)) if names_kw else ()
            if nums is not None and names is not None:
                bound_args, bound_names = _partial_binds(target_expr, self.index, self.local_aliases(chain))
                self.out.external.append(
                    ExternalRef(
                        resolved,
                        reason,
                        all_tainted=True,
                        # partial(fn, a, n=n): the bound values are the caller's Python values, and
                        # jit's argument i is fn's argument i + len(bound positional arguments)
                        static_positions=(
                            *range(bound_args),
                            *(i + bound_args if i >= 0 else i for i in nums),
                        ),
                        static_names=frozenset(names) | bound_names,
                        defaults_static=defaults,
                    )
                )
        if kind in JIT_KINDS:
            bound_name = None
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
                bound_name = target_label(parent.targets[0])
            immediately = isinstance(parent, ast.Call) and parent.func is call
            owner = innermost_function(chain)
            self._add_site(
                call, kind, target, bound_method, keywords, owner, chain, in_comp, bound_name, immediately
            )

    def _lifted_module(self, name: str, reason: str, kind: str) -> None:
        """``nn.jit(Block)``: flax's lifted transform traces the module's ``__call__`` and its
        ``@nn.compact`` methods (the module's fields stay static)."""
        cls = self.index.classes.get(name)
        if cls is None:
            return
        for method_name, method in self.index.methods.get(id(cls), {}).items():
            compact = any(nm.last_name(d) == "compact" for d in method.decorator_list)
            if method_name == "__call__" or compact:
                params = positional_params(method)[1:]
                tainted = frozenset(params) | {a.arg for a in method.args.kwonlyargs}
                self.out.entries.append(Entry(method, reason, True, tainted, kind=kind))

    def _add_entry(
        self,
        func: DefNode,
        reason: str,
        kind: str,
        keywords: dict[str, ast.expr],
        enclosing: list[ast.stmt],
        self_excluded: bool = False,
    ) -> None:
        everything = traced_params(self.index, func, kind, keywords)
        if self_excluded:
            everything &= traced_params(self.index, func, kind, keywords, bound_method=True)
        defaulted = defaulted_for(func, kind, everything)
        owner = innermost_function(enclosing)
        static = frozenset(all_params(func)) - everything
        self.out.entries.append(
            Entry(func, reason, True, everything - defaulted, owner, defaulted, static, kind=kind)
        )

    def _add_site(
        self,
        node: ast.expr,
        kind: str,
        target: FuncNode | None,
        bound_method: bool,
        keywords: dict[str, ast.expr],
        owner: DefNode | None,
        chain: list[ast.stmt],
        in_comp: bool,
        bound_name: str | None,
        immediately: bool = False,
    ) -> None:
        nums_kw, names_kw = STATIC_KEYWORDS.get(kind, ("", ""))
        nums = literal_ints(keywords.get(nums_kw)) if nums_kw else ()
        names = literal_strs(keywords.get(names_kw)) if names_kw else ()
        in_loop = in_comp or loop_in_chain(chain)
        site = JitSite(
            node,
            kind,
            target,
            bound_method,
            nums,
            names,
            keywords,
            owner,
            in_loop,
            immediately,
            bound_name,
            list(chain),
        )
        self.out.jit_sites.append(site)


def _partial_binds(
    expr: ast.expr, index: ModuleIndex, local: dict[str, str] | None
) -> tuple[int, frozenset[str]]:
    """How many positional arguments and which keywords ``functools.partial(fn, ...)`` binds."""
    if not (
        isinstance(expr, ast.Call)
        and expr.args
        and index.names.qualify(expr.func, local) == "functools.partial"
    ):
        return 0, frozenset()
    inner_args, inner_names = _partial_binds(expr.args[0], index, local)
    if any(isinstance(a, ast.Starred) for a in expr.args[1:]):
        return inner_args, inner_names
    names = frozenset(k.arg for k in expr.keywords if k.arg)
    return inner_args + len(expr.args) - 1, inner_names | names


def defaulted_for(func: FuncNode, kind: str, traced: frozenset[str]) -> frozenset[str]:
    """The traced parameters that ``kind`` (jit, pmap, ...) leaves at their defaults unless a call passes them."""
    return traced & defaulted_params(func) if kind in DEFAULTS_STATIC_KINDS else frozenset()
