"""JS301 `unhashable-static-argument`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from jitscope.linter.context import (
    CallSite,
    ModuleContext,
    argument_for,
    block_statements,
    label,
    param_defaults,
    static_params,
)
from jitscope.linter.rule import Rule
from jitscope.model.lint import Finding

_UNHASHABLE_NODES = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


_ARRAY_MAKERS = frozenset({"array", "asarray", "zeros", "ones", "arange", "empty", "full", "linspace"})


_UNHASHABLE_ANNOTATIONS = frozenset(
    {"list", "dict", "set", "List", "Dict", "Set", "ndarray", "Array", "MutableMapping"}
)


def _unhashable(ctx: ModuleContext, node: ast.expr) -> str | None:
    if isinstance(node, _UNHASHABLE_NODES):
        return {ast.ListComp: "list", ast.DictComp: "dict", ast.SetComp: "set"}.get(
            type(node), type(node).__name__.lower()
        )
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in ("list", "dict", "set", "bytearray"):
            return node.func.id
        if isinstance(node.func, ast.Name) and _unhashable_dataclass(ctx.class_named(node.func.id)):
            return f"`{node.func.id}` (a dataclass with eq and without frozen=True has no __hash__)"
        qualified = ctx.qualified_name(node.func) or ""
        head, _, last = qualified.rpartition(".")
        if head in ("numpy", "jax.numpy") and last in _ARRAY_MAKERS:
            return "array"
    return None


def _unhashable_dataclass(cls: ast.ClassDef | None) -> bool:
    """``@dataclass`` (or ``@dataclasses.dataclass(...)``) without ``frozen=True``, ``eq=False`` or
    ``unsafe_hash=True`` and without its own ``__hash__``: Python sets ``__hash__`` to None."""
    if cls is None:
        return False
    for dec in cls.decorator_list:
        func = dec.func if isinstance(dec, ast.Call) else dec
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name != "dataclass":
            continue
        keywords = {k.arg: k.value for k in dec.keywords} if isinstance(dec, ast.Call) else {}
        flags = {k: v.value for k, v in keywords.items() if isinstance(v, ast.Constant)}
        if len(flags) != len(keywords) or flags.get("frozen") or flags.get("unsafe_hash"):
            return False
        if flags.get("eq", True) is False:
            return False
        return not any(
            (isinstance(stmt, ast.FunctionDef) and stmt.name == "__hash__")
            or (isinstance(stmt, ast.Assign) and any(getattr(t, "id", "") == "__hash__" for t in stmt.targets))
            for stmt in cls.body
        )
    return False


def _unhashable_name(ctx: ModuleContext, cs: CallSite, arg: ast.expr) -> str | None:
    """A name whose value is unhashable: the last assignment before the call in the calling function
    (``dims = []`` then appends), else a module-level value (``eval_step(x, cfg=CONFIG)``)."""
    if not isinstance(arg, ast.Name):
        return None
    function = cs.function
    if function is not None:
        if arg.id in {
            a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)
        }:
            return None
        value: ast.expr | None = None
        assigned = False
        for stmt in block_statements(function.body):
            if stmt.lineno >= cs.call.lineno:
                break
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(isinstance(t, ast.Name) and t.id == arg.id for t in targets):
                    assigned = True
                    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
            elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.With)) and arg.id in _bound_by(stmt):
                assigned, value = True, None
        if assigned:
            return _unhashable(ctx, value) if value is not None else None
    value = ctx.module_values.get(arg.id)
    return _unhashable(ctx, value) if value is not None else None


def _bound_by(stmt: ast.For | ast.AsyncFor | ast.With) -> set[str]:
    targets = (
        [stmt.target] if isinstance(stmt, (ast.For, ast.AsyncFor)) else [i.optional_vars for i in stmt.items]
    )
    return {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}


def _annotated(func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> Iterator[ast.arg]:
    args = func.args
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        if arg.annotation is not None:
            yield arg


def _annotation_unhashable(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id in _UNHASHABLE_ANNOTATIONS
    if isinstance(node, ast.Attribute):
        return node.attr in _UNHASHABLE_ANNOTATIONS
    return False


class UnhashableStaticArgument(Rule):
    """Unhashable value for a static argument.

    ## What it does
    Flags lists, dicts, sets and arrays passed for (or defaulted into, or annotated
    on) a parameter that `static_argnums`/`static_argnames` marks static -- also when
    passed by name (`cfg=CONFIG` with a module-level dict, a list built by appends), an
    instance of a `@dataclass` that is neither frozen nor `eq=False` (it has no `__hash__`),
    and for functions jitted by a project's own wrappers (`step = jit_static(f, static_argnames=...)`,
    or a factory that returns `jax.jit(fn, static_argnums=...)`, in this module or another one,
    used as a call or a decorator).

    ## Why is this bad?
    Static arguments are part of the compilation cache key and must be hashable;
    jit raises `ValueError: Non-hashable static arguments are not supported`.

    ## Example
    ```python
    @functools.partial(jax.jit, static_argnames="sizes")
    def f(x, sizes):
        return x.reshape(sizes)

    f(x, sizes=[2, 3])
    ```

    ## Use instead
    ```python
    f(x, sizes=(2, 3))
    ```
    """

    code = "JS301"
    name = "unhashable-static-argument"
    severity = "error"
    summary = "lists, dicts, sets or arrays given for static arguments are unhashable"
    failure_kinds = frozenset({"unhashable_static"})
    bad = (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='sizes')\ndef f(x, sizes):\n    return x.reshape(sizes)\ny = f(1.0, sizes=[1])\n",
        "import jax\ndef g(x, opts={'a': 1}):\n    return x\ngj = jax.jit(g, static_argnums=(1,))\n",
        "import jax\nimport numpy as np\nfrom functools import partial\n@partial(jax.jit, static_argnums=1)\ndef f(x, idx):\n    return x[idx]\nf(1.0, np.array([0, 1]))\n",
    )
    good = (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='sizes')\ndef f(x, sizes=(1,)):\n    return x.reshape(sizes)\ny = f(1.0, sizes=(1,))\nz = f([1.0], sizes=(1,))\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for site in ctx.jit_sites:
            target = site.target
            if target is None:
                continue
            static = static_params(site)
            for param, default in param_defaults(target):
                kind = _unhashable(ctx, default) if param in static else None
                if kind:
                    yield ctx.finding(
                        self,
                        default,
                        f"static parameter `{param}` of jitted `{ctx.jitted_name(site)}` "
                        f"defaults to an unhashable {kind}",
                        ctx.jitted_name(site),
                        "use a tuple, frozenset or another hashable value",
                    )
            for param_node in _annotated(target):
                annotation = param_node.annotation
                if param_node.arg in static and annotation is not None and _annotation_unhashable(annotation):
                    # an annotation is a claim about the value, not the value: callers may pass a tuple
                    yield _uncertain(ctx.finding(
                        self,
                        param_node,
                        f"static parameter `{param_node.arg}` of jitted `{ctx.jitted_name(site)}` is "
                        f"annotated as unhashable `{label(annotation)}`",
                        ctx.jitted_name(site),
                        "use a tuple or another hashable type for static parameters",
                    ))
        for cs in ctx.call_sites:
            static = static_params(cs.site)
            for param, arg in argument_for(cs.site, cs.call).items():
                if param not in static:
                    continue
                literal = _unhashable(ctx, arg)
                kind = literal or _unhashable_name(ctx, cs, arg)
                if kind:
                    finding = ctx.finding(
                        self,
                        arg,
                        f"unhashable {kind} passed for static argument `{param}` of jitted "
                        f"`{ctx.jitted_name(cs.site)}`",
                        ctx.caller_name(cs),
                        "pass a tuple (or another hashable value) instead",
                    )
                    # a name's value is inferred from an earlier assignment, which another path may skip
                    yield finding if literal else _uncertain(finding)


def _uncertain(finding: Finding) -> Finding:
    return dataclasses.replace(finding, severity="warning")
