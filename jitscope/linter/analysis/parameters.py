"""Which parameters of a traced function hold traced values.

``static_argnums``/``static_argnames`` (and pmap's ``static_broadcasted_argnums``,
custom_jvp's ``nondiff_argnums``, vmap's ``in_axes=None``) make parameters static;
``functools.partial`` binds some; parameters with defaults keep their (static)
defaults unless a call passes them. Everything else is traced.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.analysis.module_index import FuncNode, ModuleIndex
from jitscope.linter.analysis.qualified_names import words

_ARRAY_ANNOTATIONS = words(
    "Array ArrayLike ndarray Float Int Bool Shaped Num Real Inexact Integer Complex UInt Key "
    "PRNGKeyArray Tracer Float32 Int32"
)


STATIC_KEYWORDS = {
    "jit": ("static_argnums", "static_argnames"),
    "pmap": ("static_broadcasted_argnums", "static_argnames"),
    "checkpoint": ("static_argnums", ""),
    "custom_jvp": ("nondiff_argnums", "nondiff_argnames"),
    "custom_vjp": ("nondiff_argnums", "nondiff_argnames"),
}


#: Wrappers that user code calls directly: a parameter with a default is usually left at it
#: (a Python constant, so static) unless a call site passes it.
DEFAULTS_STATIC_KINDS = frozenset({"jit", "pmap", "checkpoint", "custom_jvp", "custom_vjp"})


def positional_params(func: FuncNode) -> list[str]:
    args = func.args
    return [a.arg for a in (*args.posonlyargs, *args.args)]


def all_params(func: FuncNode) -> list[str]:
    args = func.args
    out = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg:
        out.append(args.vararg.arg)
    if args.kwarg:
        out.append(args.kwarg.arg)
    return out


def self_param(index: ModuleIndex, func: FuncNode) -> str | None:
    """Name of ``self``/``cls`` when ``func`` is a method (not a staticmethod)."""
    if id(func) not in index.method_class or isinstance(func, ast.Lambda):
        return None
    for dec in func.decorator_list:
        if isinstance(dec, ast.Name) and dec.id == "staticmethod":
            return None
    params = positional_params(func)
    return params[0] if params else None


def literal_ints(node: ast.expr | None) -> tuple[int, ...] | None:
    if node is None:
        return ()
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        bounds = [literal_ints(a) for a in node.args]
        if all(b is not None and len(b) == 1 for b in bounds) and 1 <= len(bounds) <= 3:
            return tuple(range(*(b[0] for b in bounds if b)))
        return None
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    out: list[int] = []
    for item in items:
        sign = 1
        if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub):
            sign, item = -1, item.operand
        if not (isinstance(item, ast.Constant) and type(item.value) is int):
            return None
        out.append(sign * item.value)
    return tuple(out)


def literal_strs(node: ast.expr | None) -> tuple[str, ...] | None:
    if node is None:
        return ()
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    out: list[str] = []
    for item in items:
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            return None
        out.append(item.value)
    return tuple(out)


def partial_keywords(func: FuncNode, call: ast.Call) -> frozenset[str]:
    """Parameters ``functools.partial(func, ...)`` binds by keyword; with ``**kwargs``, every
    keyword-only or defaulted parameter counts as bound (the usual way configuration is passed)."""
    named = {k.arg for k in call.keywords if k.arg}
    if any(k.arg is None for k in call.keywords):
        named.update(a.arg for a in func.args.kwonlyargs)
        named.update(defaulted_params(func))
    return frozenset(named)


class _Bound:
    """What ``functools.partial(f, n=expr)`` binds when ``expr`` is not a literal: a value, taken to be
    not None (``if n is None:`` in ``f`` is the path of the callers that do not bind it)."""

    def __repr__(self) -> str:
        return "<bound>"


BOUND = _Bound()


def partial_constants(call: ast.Call) -> dict[str, object]:
    """Keywords ``functools.partial(f, ...)`` binds: to their literal, or to :data:`BOUND`."""
    return {
        k.arg: k.value.value if isinstance(k.value, ast.Constant) else BOUND for k in call.keywords if k.arg
    }


def _is_array_annotation(node: ast.expr | None) -> bool:
    if node is None:
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in _ARRAY_ANNOTATIONS:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr in _ARRAY_ANNOTATIONS:
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "Array" in sub.value:
            return True
    return False


def traced_params(
    index: ModuleIndex,
    func: FuncNode,
    kind: str,
    keywords: dict[str, ast.expr],
    bound_method: bool = False,
    bound: int = 0,
    bound_names: frozenset[str] = frozenset(),
) -> frozenset[str]:
    """Parameters of ``func`` that hold traced values when ``kind`` traces it."""
    params = all_params(func)
    positional = positional_params(func)
    skip: set[str] = set()
    me = self_param(index, func)
    if me is not None:
        skip.add(me)
    if bound_method and positional:
        skip.add(positional[0])
        positional = positional[1:]
    skip.update(positional[:bound])
    skip.update(bound_names)
    if kind in ("filter_jit", "filter_vmap"):
        args = func.args
        annotated = {
            a.arg
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
            if _is_array_annotation(a.annotation)
        }
        return frozenset(p for p in params if p in annotated and p not in skip)
    nums_kw, names_kw = STATIC_KEYWORDS.get(kind, ("", ""))
    static: set[str] = set()
    if kind == "vmap":
        axes = keywords.get("in_axes")
        if isinstance(axes, (ast.Tuple, ast.List)):
            for i, axis in enumerate(axes.elts):
                if isinstance(axis, ast.Constant) and axis.value is None and i < len(positional):
                    static.add(positional[i])
    for key in (nums_kw, names_kw):
        if not key or key not in keywords:
            continue
        value = keywords[key]
        if key == names_kw:
            strs = literal_strs(value)
            if strs is None:
                return frozenset()
            static.update(strs)
        else:
            ints = literal_ints(value)
            if ints is None:
                return frozenset()
            for i in ints:
                if -len(positional) <= i < len(positional):
                    static.add(positional[i])
    if kind == "body":
        # lax passes exactly the loop/branch operands: parameters with defaults keep them
        static.update(defaulted_params(func))
    return frozenset(p for p in params if p not in static and p not in skip)


def transformed_params(positional: list[str], transform: str, options: dict[str, ast.expr]) -> frozenset[str]:
    """The positional parameters that ``grad``-family transforms differentiate (``argnums``, 0 by
    default) or that ``vmap`` maps (``in_axes`` entries not None): those hold tracers whatever the
    caller passes. Unknown ``argnums``/``in_axes``: none for sure."""
    if transform == "vmap":
        axes = options.get("in_axes")
        if axes is None:
            return frozenset(positional)
        if isinstance(axes, ast.Constant):
            return frozenset() if axes.value is None else frozenset(positional)
        if isinstance(axes, (ast.Tuple, ast.List)):
            return frozenset(
                name
                for name, axis in zip(positional, axes.elts, strict=False)
                if not (isinstance(axis, ast.Constant) and axis.value is None)
            )
        return frozenset()
    argnums = options.get("argnums")
    nums = (0,) if argnums is None else literal_ints(argnums)
    if nums is None:
        return frozenset()
    return frozenset(positional[i] for i in nums if -len(positional) <= i < len(positional))


def param_defaults(func: FuncNode) -> Iterator[tuple[str, ast.expr]]:
    """Each parameter that has a default, with the default's expression."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    for arg, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=False):
        yield arg.arg, default
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=False):
        if kw_default is not None:
            yield arg.arg, kw_default


def defaulted_params(func: FuncNode) -> set[str]:
    return {name for name, _ in param_defaults(func)}
