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
from typing import TYPE_CHECKING, Any

from jitscope.linter.analysis import qualified_names as nm
from jitscope.linter.analysis.discovered import ExternalRef
from jitscope.linter.analysis.function_refs import ResolvedFunction
from jitscope.linter.analysis.module_index import ModuleIndex
from jitscope.linter.analysis.parameters import (
    all_params,
    positional_params,
    traced_params,
)
from jitscope.linter.analysis.qualified_names import static_function_name, words
from jitscope.linter.analysis.taint_flags import (
    ARRAY,
    CONTAINER,
    ELEMS,
    FRESH,
    TAINT,
    CallEdge,
    FunctionFacts,
    Summarizer,
)
from jitscope.linter.analysis.taint_resolution import CallResolution
from jitscope.linter.analysis.taint_transforms import TransformCalls
from jitscope.linter.analysis.taint_transforms import label_of as _label
from jitscope.model.effect_catalogue import MUTATING_METHODS

_STATIC_BUILTINS = words(
    "len isinstance issubclass type id callable hasattr repr str hash bool int float complex range "
    "print format ord chr vars dir super object setattr delattr open input globals locals"
)
_CONTAINER_BUILTINS = frozenset(
    {"list", "tuple", "dict", "set", "frozenset", "sorted", "reversed", "zip", "enumerate", "map", "filter"}
)
#: methods that, called on a traced value, return a traced array
_ARRAY_METHODS = words(
    "sum mean max min any all prod std var argmax argmin astype reshape ravel flatten squeeze "
    "transpose dot cumsum cumprod clip round conj set add multiply get swapaxes take nonzero sort "
    "argsort repeat real imag"
)
#: the other methods of jax.Array: called on a traced array, they return one
_JAX_ARRAY_METHODS = _ARRAY_METHODS | words(
    "argpartition choose compress conjugate copy diagonal ptp searchsorted trace view to_device "
    "block_until_ready addressable_data __getitem__ __array__ __jax_array__ cumlogsumexp divide power "
    "apply min max mul"
)
_CONCRETE_METHODS = frozenset(
    {"item", "tolist", "__bool__", "__int__", "__float__", "__index__", "__len__", "keys"}
)
#: methods that change their receiver in place (the side-effect catalogue's list)
MUTATORS = MUTATING_METHODS
_EXTERNAL_SKIP = frozenset(
    {"jax", "jaxlib", "numpy", "scipy", "equinox", "flax", "optax", "chex", "typing"}
) | frozenset(sys.stdlib_module_names)


class CallEvaluator(CallResolution, TransformCalls):
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

    def call(self, node: ast.Call) -> int:
        func = node.func
        base = 0
        transformed = self._transformed(func)
        if isinstance(func, ast.Attribute):
            base = self.expr(func.value)
        elif not isinstance(func, ast.Name) and transformed is None:
            self.expr(func)
        positional = [(self.expr(a), isinstance(a, ast.Starred)) for a in node.args]
        keywords = [(k.arg, self.expr(k.value)) for k in node.keywords]
        any_flags = 0
        for f, _ in positional:
            any_flags |= f
        for _, f in keywords:
            any_flags |= f
        any_taint = any_flags & TAINT
        arg_kind = any_flags & (TAINT | ARRAY) if any_taint else 0
        qualified = self.qualify(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
        if transformed is not None:
            return self._call_transformed(node, transformed, positional, keywords)

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
                if name in ("map", "filter", "sorted"):
                    self._callbacks(node, arg_kind, None)
                out = any_taint | CONTAINER | FRESH
                return out | ELEMS if any_taint and any_flags & (ARRAY | ELEMS) else out
        resolved = self.resolve(func) if qualified is None else None
        if isinstance(resolved, ResolvedFunction):
            tainted, arrays = self.map_arguments(resolved, node, positional, keywords)
            self._edge(resolved, tainted, arrays, False, f"called from `{self.facts.qualname}`")
            if static_function_name(getattr(resolved.func, "name", "")):
                return 0
            if self.summarize is not None:
                closure = self.env if resolved.owner is self.facts.func else {}
                flags, elts = self.summarize(resolved.func, tainted, arrays, closure)
                if elts is not None:
                    self.facts.tuple_flags[id(node)] = elts
                return flags
            return any_taint | FRESH
        if qualified is not None:
            return self._qualified_call(node, qualified, positional, keywords, any_taint)
        held = self.held_callee(func)
        if held is not None:
            self._external_call(held, positional, keywords)
        if isinstance(func, ast.Attribute):
            method = func.attr
            if isinstance(func.value, ast.Constant):
                return 0
            if method in _CONCRETE_METHODS or _is_predicate(method):
                return 0
            if method == "copy":
                return base | FRESH
            if method == "get" and node.args and isinstance(node.args[0], ast.Constant):
                return base & (TAINT | ARRAY | FRESH)  # `d.get("key", default)`: a dict lookup, like d["key"]
            if method in MUTATORS:
                root = func.value
                if isinstance(root, ast.Name) and root.id in self.env:
                    self.env[root.id] |= any_taint
                return (base & TAINT) if method in ("pop", "setdefault") else 0
            if method in self.index.static_methods and not any_taint:
                return 0  # `sys.num_links()` returning `len(self.link_types)`: a static size
            traced = (base | any_taint) & TAINT
            if traced and (
                method in _ARRAY_METHODS
                or method in self.index.array_methods
                or (base & ARRAY and method in _JAX_ARRAY_METHODS)
            ):
                return TAINT | ARRAY | FRESH
            # a method jax.Array does not have: the receiver is an object, what it returns is unknown
            return traced | FRESH
        return any_taint | (any_flags & ARRAY if any_taint else 0) | FRESH

    def _external_call(
        self, qualified: str, positional: list[tuple[int, bool]], keywords: list[tuple[str | None, int]]
    ) -> None:
        """Ask the runner to analyse ``qualified`` (a function of another module) as called from here."""
        self.facts.external.append(
            ExternalRef(
                qualified,
                f"called from `{self.facts.qualname}`",
                tuple(f & (TAINT | ARRAY) if f & TAINT else 0 for f, _ in positional),
                frozenset(k for k, f in keywords if k and f & TAINT),
                all_tainted=any(star and f & TAINT for f, star in positional),
                array_keywords=frozenset(k for k, f in keywords if k and f & TAINT and f & ARRAY),
                # `f(*args)` with args of unknown length: it fills the parameters without defaults
                defaults_static=any(star for _, star in positional),
            )
        )

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
        if nm.is_tree_map(qualified) and node.args:
            leaf = self._tree_map_callback(node, positional)
            if leaf is not None and not leaf & TAINT:
                return CONTAINER | FRESH  # `tree_map(lambda p: p.ndim > 1, params)`: a tree of Python bools
        elif nm.mapping_transform(qualified) is not None:
            self._differentiated(node, nm.mapping_transform(qualified) or "")
        elif nm.is_body_taker(qualified) or nm.is_tracing_caller(qualified):
            self._callbacks(node, TAINT, "body")
        if nm.is_static_result(qualified) or _is_predicate(qualified) or static_function_name(qualified):
            return 0
        if jax_family and _is_axis_size(qualified, node):
            return 0
        if nm.is_tree_flatten(qualified) and positional:
            leaves = positional[0][0]
            self.facts.tuple_flags[id(node)] = (CONTAINER | ELEMS | TAINT if leaves & TAINT else CONTAINER, 0)
            return (leaves & TAINT) | CONTAINER | FRESH
        if nm.is_array_producer(qualified):
            return TAINT | ARRAY | FRESH
        root = qualified.partition(".")[0]
        if root == "numpy":
            return (any_taint | FRESH) if any_taint else FRESH
        if root == "math":
            return 0
        if not jax_family and root not in _EXTERNAL_SKIP:
            self._external_call(qualified, positional, keywords)
        # What another module's function returns is unknown: perhaps traced, but an array only when it
        # transforms an array given first (`helpers.clip(x)`); `substitute(model, data=params)` or
        # `trace(model).get_trace(params)` return models and dicts of metadata and values.
        first = positional[0][0] if positional and not positional[0][1] else 0
        return any_taint | (first & ARRAY if first & TAINT and not jax_family else 0) | FRESH

    def _edge(
        self,
        resolved: ResolvedFunction,
        tainted: frozenset[str],
        arrays: frozenset[str],
        boundary: bool,
        reason: str,
    ) -> None:
        kind = "body" if boundary else "callee"
        self.facts.edges.append(
            CallEdge(resolved.func, resolved.owner, tainted, arrays, boundary, reason, kind)
        )

    def _tree_map_callback(self, node: ast.Call, positional: list[tuple[int, bool]]) -> int | None:
        """``tree_map(f, a, b)`` calls ``f`` on leaves of ``a`` and ``b``: parameter i gets argument i+1.
        Returns the flags of what ``f`` returns for a leaf (None when unknown)."""
        resolved = self.resolve(node.args[0])
        if not isinstance(resolved, ResolvedFunction):
            return None
        leaves = [(f | ARRAY if f & TAINT else f, star) for f, star in positional[1:]]
        if nm.last_name(node.func).endswith("_with_path"):
            leaves.insert(0, (0, False))  # tree.map_with_path(f, tree): f(path, leaf), the path is static
        tainted, arrays = self.map_arguments(resolved, None, leaves, [])
        self._edge(
            resolved, tainted, arrays, True, f"passed to {_label(node.func)} in `{self.facts.qualname}`"
        )
        if self.summarize is None or any(k.arg == "is_leaf" for k in node.keywords):
            return None
        closure = self.env if resolved.owner is self.facts.func else {}
        return self.summarize(resolved.func, tainted, arrays, closure)[0]

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
                    if kind == "vmap" and len(node.args) >= 2 and item is node.args[0]:
                        keywords.setdefault("in_axes", node.args[1])
                    tainted = traced_params(
                        self.index,
                        resolved.func,
                        kind,
                        keywords,
                        resolved.bound_method,
                        len(resolved.bound_args),
                        resolved.bound_keywords,
                    )
                    self._edge(
                        resolved, tainted, tainted, True, f"passed to {label} in `{self.facts.qualname}`"
                    )
                else:
                    tainted = frozenset(all_params(resolved.func)) if taint & TAINT else frozenset()
                    if tainted:
                        first = positional_params(resolved.func)
                        skip = set(first[: int(resolved.bound_method) + len(resolved.bound_args)])
                        tainted = tainted - skip - resolved.bound_keywords
                    arrays = tainted if taint & ARRAY else frozenset()
                    self._edge(
                        resolved, tainted, arrays, False, f"passed to {label} in `{self.facts.qualname}`"
                    )


#: name prefixes of predicates that answer a Python bool about their argument (``is_array``,
#: ``not_jax_tracer``, ``has_aux``); ``jnp.isnan`` and friends have no underscore and stay arrays
_PREDICATE_PREFIXES = ("is_", "not_", "has_")


def _is_predicate(name: str) -> bool:
    return name.rpartition(".")[2].lstrip("_").startswith(_PREDICATE_PREFIXES)


def _is_axis_size(qualified: str, node: ast.Call) -> bool:
    """``lax.axis_size(name)`` and ``lax.psum(1, name)``: the size of a named axis, a Python int."""
    last = qualified.rpartition(".")[2]
    if last == "axis_size":
        return True
    first = node.args[0] if node.args else None
    return last == "psum" and isinstance(first, ast.Constant) and type(first.value) is int
