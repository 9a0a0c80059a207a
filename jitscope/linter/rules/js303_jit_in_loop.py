"""JS303 `jit-in-loop`: docs, examples and static check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    JitSite,
    ModuleContext,
    block_statements,
    header_roots,
    last_name,
    walk_with_parents,
)
from jitscope.linter.rule import Rule
from jitscope.model.lint import Finding

_CACHE_DECORATORS = frozenset(
    {"cache", "lru_cache", "cached", "memoize", "weakref_lru_cache", "cached_property"}
)


#: functions that run once per program or test, where building a jitted function inline is fine
_RUN_ONCE = ("test", "setUp", "setup", "main", "__init__", "_run_example")
#: decorators that make a function a program's entry point (``@hydra.main(...)``, ``@click.command()``)
_ENTRY_DECORATORS = frozenset({"main", "command", "run"})


def _entry_point(ctx: ModuleContext, owner: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function that runs once per program: named like one, decorated as a program's entry point,
    or called from the module's ``if __name__ == "__main__":`` block."""
    if owner.name.startswith(_RUN_ONCE):
        return True
    if any(last_name(d.func if isinstance(d, ast.Call) else d) in _ENTRY_DECORATORS for d in owner.decorator_list):
        return True
    names = ctx.memo.get("js303_main_calls")
    if names is None:
        names = ctx.memo["js303_main_calls"] = _main_block_names(ctx.tree)
    return owner.name in names


def _main_block_names(tree: ast.Module) -> frozenset[str]:
    """Names called or passed (``app.run(main)``) in ``if __name__ == "__main__":`` at module level."""
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test):
            for node in (n for sub in stmt.body for n in ast.walk(sub)):
                if isinstance(node, ast.Name):
                    out.add(node.id)
    return frozenset(out)


def _applied(site: JitSite) -> str:
    """How the jit was written: ``jax.jit``, ``eqx.filter_jit``, ``nnx.jit``."""
    node = site.node
    if isinstance(node, ast.Call):
        partial = last_name(node.func) == "partial" and node.args
        return ast.unparse(node.args[0] if partial else node.func)
    return f"jax.{site.kind}" if site.kind in ("jit", "pmap") else site.kind


def _is_test_file(path: str) -> bool:
    name = path.replace("\\", "/").rpartition("/")[2]
    return name.startswith("test_") or name.endswith(("_test.py", "_tests.py")) or name == "conftest.py"


def _fresh_target(ctx: ModuleContext, site: JitSite) -> bool:
    """jit of a lambda, partial, closure or bound method: a new cache key each time.
    (jit of the same module-level function again hits JAX's cache, also when it is named through its
    module: ``jax.jit(quantity.kinetic_energy)``.)"""
    node = site.node
    if not isinstance(node, ast.Call):
        return True  # @jax.jit on a def inside the loop: a new function object every iteration
    first = node.args[0] if node.args else None
    if isinstance(first, ast.Attribute) and ctx.qualified_name(first) is not None:
        return False  # a function of an imported module: the same object on every iteration
    if isinstance(first, (ast.Lambda, ast.Attribute)) or _is_partial(first) or _is_transformed(first):
        return True
    target = site.target
    return target is not None and site.in_function is not None and _defined_in(target, site.in_function)


def _called_in_loop(site: JitSite) -> bool:
    """The jitted function is used inside the loop that builds it (not just collected, e.g. in a table)."""
    if site.immediately_called:
        return True
    name = site.bound_name
    loops = [s for s in site.chain if isinstance(s, (ast.For, ast.AsyncFor, ast.While))]
    if not name or not loops:
        return False
    short = name.rpartition(".")[2]
    for stmt in block_statements(getattr(loops[-1], "body", [])):
        for sub in ast.walk(stmt) if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else ():
            if isinstance(sub, ast.Call) and last_name(sub.func) == short:
                return True
    return False


def _cached(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        last_name(dec.func if isinstance(dec, ast.Call) else dec) in _CACHE_DECORATORS
        for dec in func.decorator_list
    )


def _what(site: JitSite) -> str:
    node = site.node
    if any(node is d for d in getattr(site.target, "decorator_list", ())):
        return "closure"  # @partial(jax.pmap, ...) on a nested def
    if isinstance(node, ast.Call) and node.args:
        first = node.args[0]
        if isinstance(first, ast.Lambda):
            return "lambda"
        if isinstance(first, ast.Call) and _is_transformed(first):
            return f"{last_name(first.func)}(...)"
        if isinstance(first, ast.Call):
            return "functools.partial"
        if isinstance(first, ast.Attribute):
            return "bound method"
    return "closure"


def _fresh_each_call(site: JitSite, owner: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """jit of an object made anew on each call of ``owner``, used only inside that call."""
    node = site.node
    if isinstance(node, ast.Call):
        first = node.args[0] if node.args else None
        fresh = (
            isinstance(first, ast.Lambda)
            or _is_partial(first)
            or (site.target is not None and site.target is not owner and _defined_in(site.target, owner))
        )
        if isinstance(first, ast.Attribute) and site.bound_method:
            fresh = True
        if not fresh:
            return False
        if site.immediately_called:
            return True
    elif site.target is None or not _defined_in(site.target, owner):
        return False
    name = site.bound_name
    if not name or "." in name:
        return False
    called = escaped = False
    for stmt in block_statements(owner.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for sub, parent, _ in walk_with_parents(header_roots(stmt)):
            if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Load):
                if isinstance(parent, ast.Call) and parent.func is sub:
                    called = True
                else:
                    escaped = True
    return called and not escaped


def _is_partial(node: ast.expr | None) -> bool:
    """``functools.partial(...)``: a new, unhashable-by-content object on every call."""
    return isinstance(node, ast.Call) and last_name(node.func) == "partial"


#: transforms that return a new function object on every call (``jax.jit(jax.grad(f))`` in a loop)
_TRANSFORMS = frozenset(
    {
        "grad",
        "value_and_grad",
        "vmap",
        "checkpoint",
        "remat",
        "jacfwd",
        "jacrev",
        "hessian",
        "filter_grad",
        "filter_value_and_grad",
        "filter_vmap",
    }
)


def _is_transformed(node: ast.expr | None) -> bool:
    """``jax.value_and_grad(f)``, ``jax.vmap(f)``: a new function object on every call."""
    return isinstance(node, ast.Call) and last_name(node.func) in _TRANSFORMS


def _defined_in(func: ast.AST, owner: ast.AST) -> bool:
    start, end = getattr(owner, "lineno", 0), getattr(owner, "end_lineno", 0) or 0
    return start < getattr(func, "lineno", 0) <= end


_Def = ast.FunctionDef | ast.AsyncFunctionDef


def _always_traced(ctx: ModuleContext, owner: _Def, seen: dict[int, bool]) -> bool:
    """Every call of ``owner`` is traced: it is decorated with a jit or transform, or it is private (``_name``
    or nested) and every use of it in this module is inside traced code or hands it to a transform. A public
    function may be called eagerly from other modules (its tests do): not always traced."""
    if id(owner) not in seen:
        decorated = any(ctx.traces_its_argument(_decorator(d)) for d in owner.decorator_list)
        seen[id(owner)] = decorated or (_private(ctx, owner) and _uses_traced(ctx, owner))
    return seen[id(owner)]


def _decorator(node: ast.expr) -> ast.expr:
    """``@jax.jit``, ``@jax.jit(...)`` and ``@partial(jax.jit, ...)`` -> ``jax.jit``."""
    if isinstance(node, ast.Call):
        return node.args[0] if _is_partial(node) and node.args else node.func
    return node


def _private(ctx: ModuleContext, owner: _Def) -> bool:
    """``_name`` (not a dunder), or a function nested in another: not called from other modules."""
    enclosing = ctx.statements_around(owner.lineno)[:-1]
    nested = any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in enclosing)
    return nested or (owner.name.startswith("_") and not owner.name.startswith("__"))


def _uses_traced(ctx: ModuleContext, owner: _Def) -> bool:
    """Every use of ``owner``'s name (``_apply(x)``, ``self._apply(x)``) is in traced code or an argument of
    a transform (``jax.jit(_apply)``, ``jax.jit(partial(_apply, k=2))``). With no use here, what traces it is
    elsewhere (an override of a method that a base class in another module traces): traced."""
    name = owner.name
    Entry = tuple[ast.AST, ast.AST | None, ast.AST | None, ast.AST | None]  # node, parent, grandparent, function
    stack: list[Entry] = [(ctx.tree, None, None, None)]
    while stack:
        node, parent, grandparent, function = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            function = node
        refers = (isinstance(node, ast.Name) and node.id == name) or (
            isinstance(node, ast.Attribute) and node.attr == name
        )
        if refers and isinstance(getattr(node, "ctx", None), ast.Load) and function is not owner:
            traced = function is not None and ctx.traced(function) is not None  # type: ignore[arg-type]
            if not (traced or _handed_to_transform(ctx, node, parent, grandparent)):
                return False
        stack.extend((child, node, parent, function) for child in ast.iter_child_nodes(node))
    return True


def _handed_to_transform(
    ctx: ModuleContext, node: ast.AST, parent: ast.AST | None, grandparent: ast.AST | None
) -> bool:
    """``jax.jit(_apply)``, ``lax.scan(_step, ...)``, ``jax.jit(partial(_apply, k=2))``."""
    if isinstance(parent, ast.Call) and _is_partial(parent) and parent.args and parent.args[0] is node:
        node, parent = parent, grandparent
    return isinstance(parent, ast.Call) and parent.func is not node and ctx.traces_its_argument(parent.func)


class JitInLoop(Rule):
    """`jax.jit` applied inside a loop or on every call.

    ## What it does
    Flags `jax.jit(...)` calls (and `@jax.jit` on nested functions) inside loops, of a
    lambda, `functools.partial`, bound method or `jax.grad(...)`/`vmap(...)` result, and
    jit of a fresh lambda, `functools.partial` or closure that is created and called
    on every call of the enclosing function (not when every call of that function is traced,
    where the inner jit is traced once with its caller: a function decorated with a jit, or a
    private one whose every use in the module is traced; a public function may be called
    eagerly elsewhere, by its tests for one).

    ## Why is this bad?
    JAX caches compilations per function object. A new lambda, partial or closure
    each time is a new cache key: the code is traced and compiled on every iteration
    or call.

    ## Example
    ```python
    def apply_all(xs, scale):
        return [jax.jit(lambda x: x * scale)(x) for x in xs]
    ```

    ## Use instead
    ```python
    @jax.jit
    def scaled(x, scale):
        return x * scale

    def apply_all(xs, scale):
        return [scaled(x, scale) for x in xs]
    ```
    """

    code = "JS303"
    name = "jit-in-loop"
    severity = "warning"
    summary = "jax.jit applied in a loop or to a fresh lambda/partial/closure on every call recompiles"
    bad = (
        "import jax\ndef run(xs):\n    out = []\n    for x in xs:\n        f = jax.jit(lambda v: v * 2)\n        out.append(f(x))\n    return out\n",
        "import jax\ndef apply(x, scale):\n    return jax.jit(lambda v: v * scale)(x)\n",
        "import jax\nfrom functools import partial\ndef apply(x, k):\n    def inner(v, k):\n        return v * k\n    return jax.jit(partial(inner, k=k))(x)\n",
        "import jax\ndef apply(x, k):\n    @jax.jit\n    def inner(v):\n        return v * k\n    return inner(x)\n",
        "import jax\nfrom functools import partial\ndef _inner(v, k):\n    return v * k\ndef apply(x, k):\n    return jax.jit(partial(_inner, k=k))(x)\n@jax.jit\ndef outer(x):\n    return apply(x, 2.0)\n",
        "import jax\nfrom functools import partial\ndef _inner(v, k):\n    return v * k\ndef _apply(x, k):\n    return jax.jit(partial(_inner, k=k))(x)\n@jax.jit\ndef outer(x):\n    return _apply(x, 2.0)\ndef main(x):\n    return _apply(x, 3.0)\n",
    )
    good = (
        "import jax\n@jax.jit\ndef double(v):\n    return v * 2\ndef run(xs):\n    return [double(x) for x in xs]\n",
        "import jax\ndef make_step(k):\n    @jax.jit\n    def step(v):\n        return v * k\n    return step\n",
        "import jax\nimport functools\n@functools.lru_cache\ndef compiled(k):\n    return jax.jit(lambda v: v * k)\n",
        "import jax\nclass Model:\n    def __init__(self):\n        self._f = jax.jit(self._impl)\n    def _impl(self, x):\n        return x\n",
        "import jax\nfrom functools import partial\ndef _inner(v, k):\n    return v * k\ndef _apply(x, k):\n    return jax.jit(partial(_inner, k=k))(x)\n@jax.jit\ndef outer(x):\n    return _apply(x, 2.0)\nfast = jax.jit(partial(_apply, k=1.0))\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        test_file = _is_test_file(ctx.path)
        seen: dict[int, bool] = {}
        for site in ctx.jit_sites:
            owner = site.in_function
            where = ctx.name_of(owner) if owner is not None else "<module>"
            if owner is not None and (_cached(owner) or _entry_point(ctx, owner)):
                continue
            if test_file and owner is not None:
                continue  # test functions run once: a fresh jit per call costs one compile
            if site.in_loop and _called_in_loop(site) and _fresh_target(ctx, site):
                yield ctx.finding(
                    self,
                    site.node,
                    f"{_applied(site)} applied inside a loop in `{where}`: a new jitted "
                    "function is built on every iteration",
                    where,
                    "apply jax.jit once, outside the loop",
                )
            elif (
                owner is not None
                and _fresh_each_call(site, owner)
                and (ctx.traced(owner) is None or not _always_traced(ctx, owner, seen))
            ):
                # (inside traced code a fresh jit is traced with its caller, once per outer trace: fine when
                # every call of the owner is traced, not when some caller, or a test of it, runs it eagerly)
                yield ctx.finding(
                    self,
                    site.node,
                    f"{_applied(site)} of a fresh {_what(site)} on every call of "
                    f"`{where}`: each call traces and compiles again",
                    where,
                    "define the jitted function once at module level and pass values as arguments",
                )
