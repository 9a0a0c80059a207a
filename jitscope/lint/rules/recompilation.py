"""JS301-JS306: recompilation hazards around jit/pmap."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.lint.analysis.discovered import JitSite
from jitscope.lint.analysis.jit_calls import CallSite, argument_for, static_params, uses
from jitscope.lint.analysis.module_index import block_statements
from jitscope.lint.analysis.parameters import param_defaults
from jitscope.lint.rule import ModuleContext, Rule
from jitscope.lint.rules.common import label
from jitscope.model.lint import Finding

_UNHASHABLE_NODES = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_ARRAY_MAKERS = frozenset({"array", "asarray", "zeros", "ones", "arange", "empty", "full", "linspace"})
_UNHASHABLE_ANNOTATIONS = frozenset(
    {"list", "dict", "set", "List", "Dict", "Set", "ndarray", "Array", "MutableMapping"}
)


def _site_name(ctx: ModuleContext, site: JitSite) -> str:
    return ctx.index.name_of(site.target) if site.target is not None else (site.bound_name or "function")


def _where(ctx: ModuleContext, cs: CallSite) -> str:
    return ctx.index.name_of(cs.function) if cs.function is not None else "<module>"


def _unhashable(ctx: ModuleContext, node: ast.expr) -> str | None:
    if isinstance(node, _UNHASHABLE_NODES):
        return {ast.ListComp: "list", ast.DictComp: "dict", ast.SetComp: "set"}.get(
            type(node), type(node).__name__.lower()
        )
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in ("list", "dict", "set", "bytearray"):
            return node.func.id
        qualified = ctx.index.names.qualify(node.func) or ""
        head, _, last = qualified.rpartition(".")
        if head in ("numpy", "jax.numpy") and last in _ARRAY_MAKERS:
            return "array"
    return None


class UnhashableStaticArgument(Rule):
    """Unhashable value for a static argument.

    ## What it does
    Flags lists, dicts, sets and arrays passed for (or defaulted into, or annotated
    on) a parameter that `static_argnums`/`static_argnames` marks static.

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
                        f"static parameter `{param}` of jitted `{_site_name(ctx, site)}` "
                        f"defaults to an unhashable {kind}",
                        _site_name(ctx, site),
                        "use a tuple, frozenset or another hashable value",
                    )
            for param_node in _annotated(target):
                annotation = param_node.annotation
                if param_node.arg in static and annotation is not None and _annotation_unhashable(annotation):
                    yield ctx.finding(
                        self,
                        param_node,
                        f"static parameter `{param_node.arg}` of jitted `{_site_name(ctx, site)}` is "
                        f"annotated as unhashable `{label(annotation)}`",
                        _site_name(ctx, site),
                        "use a tuple or another hashable type for static parameters",
                    )
        for cs in ctx.call_sites:
            static = static_params(cs.site)
            for param, arg in argument_for(cs.site, cs.call).items():
                kind = _unhashable(ctx, arg) if param in static else None
                if kind:
                    yield ctx.finding(
                        self,
                        arg,
                        f"unhashable {kind} passed for static argument `{param}` of jitted "
                        f"`{_site_name(ctx, cs.site)}`",
                        _where(ctx, cs),
                        "pass a tuple (or another hashable value) instead",
                    )


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


class ManyStaticValues(Rule):
    """Static argument that takes many distinct values.

    ## What it does
    Flags static parameters annotated or defaulted as `float`, and call sites that
    pass a loop variable or a value computed from array data (`.item()`, `.tolist()`,
    `float(...)`) as a static argument.

    ## Why is this bad?
    Each distinct static value compiles a new program. A learning rate, a step
    counter or a data-dependent length as a static argument recompiles on nearly
    every call.

    ## Example
    ```python
    @functools.partial(jax.jit, static_argnames="step")
    def update(params, step):
        return params * 0.99 ** step

    for step in range(1000):
        params = update(params, step=step)
    ```

    ## Use instead
    ```python
    @jax.jit
    def update(params, step):      # step is traced: one compilation
        return params * 0.99 ** step
    ```
    """

    code = "JS302"
    name = "many-static-values"
    severity = "warning"
    summary = "float, loop-variable or data-derived static arguments recompile for every distinct value"
    bad = (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='step')\ndef f(x, step):\n    return x * step\ndef train(x):\n    for step in range(100):\n        x = f(x, step=step)\n    return x\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=1)\ndef f(x, lr: float):\n    return x * lr\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=1)\ndef f(x, n):\n    return x * n\ndef g(x, mask):\n    n = mask.sum().item()\n    return f(x, n)\n",
    )
    good = (
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnames='mode')\ndef f(x, mode):\n    return x if mode == 'a' else -x\ndef g(x):\n    for mode in ('a', 'b'):\n        x = f(x, mode=mode)\n    return x\n",
        "import jax\n@jax.jit\ndef f(x, step):\n    return x * step\ndef train(x):\n    for step in range(100):\n        x = f(x, step)\n    return x\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for site in ctx.jit_sites:
            if site.target is None:
                continue
            static = static_params(site)
            name = _site_name(ctx, site)
            defaults = dict(param_defaults(site.target))
            args = site.target.args
            for param_node in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                if param_node.arg not in static:
                    continue
                ann, default = param_node.annotation, defaults.get(param_node.arg)
                annotated = isinstance(ann, ast.Name) and ann.id == "float"
                defaulted = isinstance(default, ast.Constant) and isinstance(default.value, float)
                if annotated or defaulted:
                    yield ctx.finding(
                        self,
                        param_node,
                        f"static parameter `{param_node.arg}` of jitted `{name}` is a float: every "
                        "distinct value compiles anew",
                        name,
                        "make it a traced argument",
                    )
        for cs in ctx.call_sites:
            static = static_params(cs.site)
            for param, arg in argument_for(cs.site, cs.call).items():
                if param not in static:
                    continue
                why = None
                if cs.in_loop and uses(arg, cs.loop_vars):
                    why = "changes on every loop iteration"
                elif _data_derived(arg) or _data_derived_name(cs, arg):
                    why = "is computed from array data"
                if why:
                    yield ctx.finding(
                        self,
                        arg,
                        f"static argument `{param}` of jitted `{_site_name(ctx, cs.site)}` "
                        f"{why}: one compilation per distinct value",
                        _where(ctx, cs),
                        "pass it as a traced argument, or bucket its values",
                    )


def _data_derived(node: ast.AST) -> bool:
    """Contains ``.item()``/``.tolist()`` -- except as an index (``table[i.item()]`` picks one of a few values)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("item", "tolist")
    ):
        return True
    if isinstance(node, ast.Subscript):
        return _data_derived(node.value)
    return any(_data_derived(child) for child in ast.iter_child_nodes(node))


def _data_derived_name(cs: CallSite, arg: ast.expr) -> bool:
    if not isinstance(arg, ast.Name) or cs.function is None:
        return False
    for stmt in block_statements(cs.function.body):
        if stmt.lineno >= cs.call.lineno:
            break
        if (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == arg.id for t in stmt.targets)
            and _data_derived(stmt.value)
        ):
            return True
    return False
