"""JS204 `in-place-array-update`: docs, examples and static check."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from jitscope.linter.context import (
    TAINT,
    ModuleContext,
    TracedFunction,
    label,
    traced_because,
)
from jitscope.linter.fix_builder import replace, span, text_between
from jitscope.linter.rule import TracedValueRule
from jitscope.model.lint import Finding, Fix

_ARRAYISH_ATTRS = frozenset({"shape", "ndim", "dtype", "at", "T", "reshape", "astype", "sum", "mean", "size"})


def _multi_axis(index: ast.expr) -> bool:
    """``u[0, :]``, ``u[..., 1]``: NumPy-style indexing over several axes, which no list or dict takes."""
    return isinstance(index, ast.Tuple) and any(
        isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and e.value is Ellipsis) for e in index.elts
    )


def _known_array(ctx: ModuleContext, facts: TracedFunction, target: ast.Subscript) -> bool:
    """A traced parameter could be a list or dict pytree; only count it as an array when the index is
    itself traced (a list or dict cannot be indexed by a tracer), or when the function also uses it as
    one (``x.shape``, ``x.at``, arithmetic)."""
    base = target.value
    if not (isinstance(base, ast.Name) and base.id in facts.tainted_params):
        return True
    if facts.is_traced(target.slice) or _multi_axis(target.slice):
        return True
    if facts.kind in (
        "jit",
        "pmap",
        "vmap",
        "filter_jit",
        "filter_vmap",
        "shard_map",
        "checkpoint",
        "custom_jvp",
        "custom_vjp",
    ):
        return True  # arguments of a jitted function: arrays unless shown otherwise
    name = base.id
    for node, _ in ctx.body(facts):
        if isinstance(node, ast.Attribute) and node.attr in _ARRAYISH_ATTRS:
            if isinstance(node.value, ast.Name) and node.value.id == name:
                return True
        elif isinstance(node, ast.BinOp):
            for side in (node.left, node.right):
                if isinstance(side, ast.Name) and side.id == name:
                    return True
    return False


class InPlaceArrayUpdate(TracedValueRule):
    """In-place item assignment on a JAX array.

    ## What it does
    Flags `x[i] = v`, `x[i] += v` and `del x[i]` where `x` is a JAX array (a traced
    argument, or the result of a `jnp`/`lax` call).

    ## Why is this bad?
    JAX arrays are immutable; the assignment raises `TypeError` ("JAX arrays are
    immutable and do not support in-place item assignment").

    ## Example
    ```python
    @jax.jit
    def f(x):
        x[0] = 1.0
        return x
    ```

    ## Use instead
    ```python
    @jax.jit
    def f(x):
        return x.at[0].set(1.0)
    ```

    ## Fix
    `jitscope lint --fix` rewrites `x[i] = v` to `x = x.at[i].set(v)` and `x[i] += v` (`-=`, `*=`) to
    `x = x.at[i].add(v)` (`subtract`, `multiply`) where that is exactly what NumPy would do: `x` is a
    plain name that nothing else refers to (no `y = x`, no view `x[1:]` kept, not handed to a function
    that may keep it), made fresh in the function (`jnp.zeros`, arithmetic) or an argument of a function
    JAX traces directly, and the index is made of constants, slices and static names (a traced index may
    be an index array with repeated positions, where `.at[]` differs from NumPy).
    """

    code = "JS204"
    name = "in-place-array-update"
    severity = "error"
    fixable = True
    summary = "x[i] = v on a JAX array raises TypeError; use x.at[i].set(v)"
    bad = (
        "import jax\n@jax.jit\ndef f(x):\n    x[0] = 1.0\n    return x\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    buf = jnp.zeros(3)\n    buf[1] += x\n    return buf\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(x):\n    x = x.at[0].set(1.0)\n    rows = [x, x]\n    rows[0] = x * 2\n    return rows\n",
        "import numpy as np\nimport jax\n@jax.jit\ndef f(x):\n    idx = np.zeros(3, dtype=int)\n    idx[0] = 2\n    return x[idx]\n",
    )

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            for node, _ in ctx.body_nodes(facts, (ast.Assign, ast.AugAssign, ast.Delete)):
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AugAssign, ast.Delete)):
                    targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets
                else:
                    continue
                for target in targets:
                    if not isinstance(target, ast.Subscript) or not ctx.is_array_update(facts, target):
                        continue
                    if ctx.is_ref_write(target) or not _known_array(ctx, facts, target):
                        continue
                    op = "." + _AUGMENTED.get(type(node.op), "add") if isinstance(node, ast.AugAssign) else ".set"
                    base, idx = label(target.value), label(target.slice)
                    yield ctx.finding(
                        self,
                        target,
                        f"in-place item assignment on JAX array `{base}` in `{facts.qualname}`; JAX arrays are "
                        "immutable" + traced_because(facts),
                        facts.qualname,
                        f"{base} = {base}.at[{idx}]{op}(...)",
                    )

    def fix(self, ctx: ModuleContext, facts: TracedFunction, node: ast.expr,
            parents: dict[int, ast.AST]) -> Fix | str | None:
        stmt = parents.get(id(node))
        if not isinstance(node, ast.Subscript) or not isinstance(stmt, ast.Assign | ast.AugAssign):
            return None  # `del x[i]`: nothing to rewrite to
        if isinstance(stmt, ast.Assign) and stmt.targets != [node]:
            return "the statement assigns several targets"
        method = "set" if isinstance(stmt, ast.Assign) else _AUGMENTED.get(type(stmt.op))
        if method is None:
            return "only =, +=, -= and *= have an exact .at[] form"
        base = node.value
        if not isinstance(base, ast.Name):
            return f"`{label(base)}` is not a plain name"
        problem = (_index_problem(facts, node.slice, stmt.value) or _binding_problem(ctx, facts, base.id)
                   or _alias_problem(ctx, facts, base.id, parents))
        if problem:
            return problem
        if any(isinstance(n, ast.NamedExpr | ast.Yield | ast.YieldFrom | ast.Await) for n in ast.walk(stmt)):
            return "the statement has an assignment or yield expression"
        _, _, line, col = span(ctx, base)
        _, _, end_line, end_col = span(ctx, node)
        index = text_between(ctx, (line, col), (end_line, end_col)).strip()
        value = _value_text(ctx, stmt, node)
        if value is None or not index.startswith("["):
            return "its text could not be taken apart"
        text = f"{base.id} = {base.id}.at{index}.{method}({value})"
        return Fix(f"Replace with `{base.id} = {base.id}.at[...].{method}(...)`", (replace(ctx, stmt, text),))


_AUGMENTED: dict[type[ast.operator], str] = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply"}
#: attributes and methods of an array whose result shares no memory with it (NumPy's views: `.T`, `.reshape`)
_FRESH_ATTRS = frozenset({"shape", "ndim", "dtype", "size", "at", "copy", "astype", "sum", "mean", "max", "min",
                          "prod", "std", "var", "any", "all", "argmax", "argmin", "item", "tolist", "dot",
                          "cumsum", "cumprod", "nbytes", "itemsize", "round", "clip"})
#: jax.numpy functions that may return their argument itself (or, read as NumPy, a view of it)
_VIEW_FUNCTIONS = frozenset({"asarray", "array", "reshape", "ravel", "transpose", "squeeze", "expand_dims",
                             "swapaxes", "moveaxis", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to",
                             "asanyarray", "device_put", "stop_gradient", "view", "diagonal", "real", "imag"})
_UNSAFE_INDEX = (ast.Call, ast.List, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                 ast.NamedExpr, ast.Lambda, ast.Starred, ast.Await, ast.Yield, ast.YieldFrom, ast.JoinedStr)


def _index_problem(facts: TracedFunction, index: ast.expr, value: ast.expr) -> str | None:
    for sub in ast.walk(index):
        if isinstance(sub, _UNSAFE_INDEX):
            return "the index is computed by a call or is a list (an index array may repeat positions)"
        if isinstance(sub, ast.expr) and facts.flags_of(sub) & TAINT and not isinstance(sub, ast.Slice):
            return (f"the index `{label(sub)}` is traced (an index array with repeated positions updates "
                    "differently with .at[])")
    if any(isinstance(n, ast.Attribute | ast.Subscript) for n in ast.walk(index)) and any(
            isinstance(n, ast.Call) for n in ast.walk(value)):
        return "the value's call runs before the index is read after the rewrite"
    return None


def _binding_problem(ctx: ModuleContext, facts: TracedFunction, name: str) -> str | None:
    """Why ``name`` may refer to an array something else also holds (then the update would be seen there)."""
    if name in facts.globals_declared or name in facts.nonlocals_declared or (
            name in facts.closure and name not in facts.local_names):
        return f"`{name}` is not local to `{facts.qualname}`"
    args = facts.func.args
    if name in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} and not facts.boundary:
        return f"`{name}` is an argument of a helper: its callers may rely on the update"
    return _per_name(ctx, facts, "bindings", _binding_problems).get(name)


def _binding_problems(ctx: ModuleContext, facts: TracedFunction,
                      parents: dict[int, ast.AST]) -> dict[str, str]:
    """For each name of ``facts``'s body, the first binding that may give it an array shared with another."""
    problems: dict[str, str] = {}
    for node, _ in ctx.body(facts):
        if isinstance(node, ast.Assign):
            if node.targets != [t for t in node.targets if isinstance(t, ast.Name)] or not _fresh(
                    ctx, facts, node.value):
                for name in _bound(node.targets):
                    problems.setdefault(name, f"`{name}` may share its memory with another array "
                                              f"(`{label(node.value)}`)")
        elif isinstance(node, ast.AnnAssign | ast.For | ast.AsyncFor | ast.With | ast.AsyncWith | ast.comprehension
                        | ast.NamedExpr):
            for name in _bound(_targets(node)):
                problems.setdefault(name, f"`{name}` is bound by a {type(node).__name__.lower()}")
    return problems


def _per_name(ctx: ModuleContext, facts: TracedFunction, what: str,
              find: Callable[[ModuleContext, TracedFunction, dict[int, ast.AST]], dict[str, str]],
              parents: dict[int, ast.AST] | None = None) -> dict[str, str]:
    """``find``'s problems for every name at once, found once per function: a generated body with
    thousands of updates would otherwise be walked once for each."""
    key = f"JS204.{what}.{id(facts.func)}"
    found: dict[str, str] | None = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = find(ctx, facts, parents or {})
    return found


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.With | ast.AsyncWith):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    target = getattr(node, "target", None)
    return [target] if target is not None else []


def _bound(targets: list[ast.expr] | list[ast.AST]) -> set[str]:
    """The names assigned to in ``targets``."""
    return {n.id for t in targets for n in ast.walk(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _fresh(ctx: ModuleContext, facts: TracedFunction, value: ast.expr) -> bool:
    """A new array: arithmetic, a jax/jnp/lax function (not one returning a view), ``.copy()``/``.astype()``,
    or an ``.at[...]`` update."""
    if isinstance(value, ast.BinOp | ast.UnaryOp):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in ("copy", "astype"):
        return True
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Subscript) and isinstance(
            func.value.value, ast.Attribute) and func.value.value.attr == "at":
        return True
    qualified = ctx.qualified_name(func, facts) or ""
    return qualified.startswith("jax.") and qualified.rpartition(".")[2] not in _VIEW_FUNCTIONS


def _alias_problem(ctx: ModuleContext, facts: TracedFunction, name: str, parents: dict[int, ast.AST]) -> str | None:
    """Why another name may end up holding ``name``'s array (or a NumPy view of it)."""
    return _per_name(ctx, facts, "aliases", _alias_problems, parents).get(name)


def _alias_problems(ctx: ModuleContext, facts: TracedFunction, parents: dict[int, ast.AST]) -> dict[str, str]:
    problems: dict[str, str] = {}
    for node in ast.walk(facts.func):
        if not isinstance(node, ast.Name) or node.id in problems:
            continue
        if id(node) not in parents:
            problems[node.id] = f"`{node.id}` is used in a nested function"
        elif isinstance(node.ctx, ast.Load) and _escapes(ctx, facts, node, parents):
            problems[node.id] = f"`{node.id}` may also be held elsewhere (`{_holder(node, parents)}`)"
    return problems


def _escapes(ctx: ModuleContext, facts: TracedFunction, node: ast.expr, parents: dict[int, ast.AST]) -> bool:
    """Whether the array ``node`` evaluates to (or a NumPy view of it) may be kept beyond this expression."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.BinOp | ast.UnaryOp | ast.Compare | ast.FormattedValue | ast.Return):
        return False
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return parent.attr not in _FRESH_ATTRS and _escapes(ctx, facts, parent, parents)
    if isinstance(parent, ast.Subscript) and parent.value is node:
        if not isinstance(parent.ctx, ast.Load):
            return False  # the update itself
        return _escapes(ctx, facts, parent, parents)
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        if isinstance(func, ast.Name) and func.id in ("len", "isinstance", "print", "str", "repr", "float",
                                                      "int", "bool"):
            return False
        qualified = ctx.qualified_name(func, facts) or ""
        if qualified.startswith("jax.") and qualified.rpartition(".")[2] not in _VIEW_FUNCTIONS:
            return False
    if isinstance(parent, ast.Call) and parent.func is node:
        return False
    if isinstance(parent, ast.Tuple) and isinstance(parents.get(id(parent)), ast.Return):
        return False
    return not (isinstance(parent, ast.Subscript) and parent.slice is node)  # used as an index


def _holder(node: ast.expr, parents: dict[int, ast.AST]) -> str:
    """The code that may keep the array: the expression or statement around ``node``, shortened."""
    holder: ast.AST = node
    parent = parents.get(id(node))
    while isinstance(parent, ast.expr | ast.stmt) and not isinstance(holder, ast.stmt):
        holder, parent = parent, parents.get(id(parent))
        if isinstance(holder, ast.Call | ast.stmt):
            break
    text = ast.unparse(holder).splitlines()[0] if not isinstance(holder, ast.FunctionDef) else label(node)
    return text if len(text) <= 40 else text[:37] + "..."


def _value_text(ctx: ModuleContext, stmt: ast.Assign | ast.AugAssign, target: ast.Subscript) -> str | None:
    """The source of the assigned value, from just after ``=`` (or ``+=``) to the statement's end, with the
    parentheses and comments written there; a bare tuple gets parentheses."""
    _, _, line, col = span(ctx, target)
    _, _, end_line, end_col = span(ctx, stmt)
    rest = text_between(ctx, (line, col), (end_line, end_col))
    at = rest.find("=")
    if at < 0:
        return None
    text = rest[at + 1:].strip()
    value = stmt.value
    if isinstance(value, ast.Tuple) and (not value.elts or span(ctx, value)[2:] == span(ctx, value.elts[-1])[2:]):
        text = f"({text})"
    return text or None
