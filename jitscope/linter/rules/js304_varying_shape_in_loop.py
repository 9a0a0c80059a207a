"""JS304 `varying-shape-in-loop`: docs, examples and static check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    CallSite,
    ModuleContext,
    block_statements,
    label,
    last_name,
    uses,
)
from jitscope.linter.rule import Rule
from jitscope.model.lint import Finding

_SHAPE_MAKERS = frozenset(
    {"zeros", "ones", "empty", "full", "arange", "eye", "linspace", "reshape", "broadcast_to"}
)


_GROWERS = frozenset(
    {"concatenate", "append", "vstack", "hstack", "stack", "column_stack", "row_stack", "dstack"}
)


def _growing(cs: CallSite) -> set[str]:
    names: set[str] = set()
    for loop in cs.loops:
        for stmt in block_statements(loop.body):  # type: ignore[attr-defined]
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                name, value = stmt.targets[0].id, stmt.value
                if (
                    isinstance(value, ast.Call)
                    and last_name(value.func) in _GROWERS
                    and uses(value, {name})
                    or isinstance(value, ast.BinOp)
                    and uses(value, {name})
                    and isinstance(value.right, ast.List)
                ) and not _slides(value, name):
                    names.add(name)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                func = stmt.value.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("append", "extend")
                    and isinstance(func.value, ast.Name)
                ):
                    names.add(func.value.id)
    return names


def _slides(value: ast.expr, name: str) -> bool:
    """``jnp.concatenate([buf[1:], x[None]])``: every use of ``name`` drops items from its front or
    back (``name[k:]``, ``name[:-k]``), so the result is a sliding window, not a growing one."""
    parents = {child: node for node in ast.walk(value) for child in ast.iter_child_nodes(node)}
    found = False
    for node in ast.walk(value):
        if isinstance(node, ast.Name) and node.id == name:
            parent = parents.get(node)
            if not (isinstance(parent, ast.Subscript) and parent.value is node and _drops(parent.slice)):
                return False
            found = True
    return found


def _drops(part: ast.expr) -> bool:
    if not isinstance(part, ast.Slice) or part.step is not None:
        return False
    lower = part.lower.value if isinstance(part.lower, ast.Constant) else None
    upper = part.upper
    negative = isinstance(upper, ast.UnaryOp) and isinstance(upper.op, ast.USub)
    if part.lower is not None and upper is None:
        return isinstance(lower, int) and lower > 0
    return part.lower is None and negative


#: creation functions -> positions of their shape arguments (None: every positional argument)
_SHAPE_POSITIONS: dict[str, tuple[int, ...] | None] = {
    "zeros": (0,),
    "ones": (0,),
    "empty": (0,),
    "full": (0,),
    "eye": (0, 1),
    "arange": None,
    "linspace": (2,),
    "reshape": (1,),
    "broadcast_to": (1,),
}
_ARRAY_FROM_LIST = frozenset({"array", "asarray"})

#: ``jax.random`` samplers -> positions of their shape arguments (``jax.random.normal(key, (t, 4))``)
_RANDOM_SHAPE_POSITIONS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(
        "normal uniform randint exponential laplace logistic gumbel cauchy rademacher split bits maxwell"
        .split(),
        (1,),
    ),
    **dict.fromkeys("bernoulli gamma poisson chisquare t pareto loggamma choice dirichlet".split(), (2,)),
    **dict.fromkeys("truncated_normal beta double_sided_maxwell weibull_min ball".split(), (3,)),
    "orthogonal": (1, 2),
}


def _random_shape_args(ctx: ModuleContext, call: ast.Call) -> list[ast.expr] | None:
    """The shape argument of a ``jax.random`` sampler, None for any other call."""
    qualified = ctx.qualified_name(call.func) or ""
    if not qualified.startswith("jax.random.") or qualified.count(".") != 2:
        return None
    positions = _RANDOM_SHAPE_POSITIONS.get(qualified.rpartition(".")[2], ())
    args = [a for i, a in enumerate(call.args) if i in positions]
    return args + [k.value for k in call.keywords if k.arg in ("shape", "num", "n")]


def _shape_args(ctx: ModuleContext, call: ast.Call) -> list[ast.expr]:
    """The arguments of a shape maker that set the shape (``x.reshape(n, -1)``: all; ``jnp.full(s, v)``: s)."""
    name = last_name(call.func)
    qualified = ctx.qualified_name(call.func) or ""
    function_form = qualified.startswith(("numpy.", "jax.numpy.", "jax.lax."))
    positions = (
        _SHAPE_POSITIONS.get(name) if function_form or name not in ("reshape", "broadcast_to") else None
    )
    args = [a for i, a in enumerate(call.args) if positions is None or i in positions]
    return args + [k.value for k in call.keywords if k.arg in ("shape", "newshape", "num")]


def _varying(ctx: ModuleContext, arg: ast.expr, loops: _Loops, growing: set[str]) -> str | None:
    loop_vars = loops.names
    parents = {child: node for node in ast.walk(arg) for child in ast.iter_child_nodes(node)}
    for sub in ast.walk(arg):
        if isinstance(sub, ast.Subscript):
            slices = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
            for part in slices:
                if not isinstance(part, ast.Slice):
                    continue
                lower = part.lower is not None and uses(part.lower, loop_vars)
                upper = part.upper is not None and uses(part.upper, loop_vars)
                if lower != upper:
                    return "sliced by the loop variable"
                if lower and upper and (loops.ragged_window(part) or loops.batches.ragged_slice(part)):
                    return "whose last batch is shorter (the range's stop is not a multiple of its step)"
        elif isinstance(sub, ast.Call) and last_name(sub.func) in _SHAPE_MAKERS:
            if any(uses(a, loop_vars) for a in _shape_args(ctx, sub)):
                return "whose shape depends on the loop variable"
        elif isinstance(sub, ast.Call) and (sampled := _random_shape_args(ctx, sub)):
            if any(uses(a, loop_vars) for a in sampled):
                return "whose shape depends on the loop variable"
        elif isinstance(sub, ast.Call) and last_name(sub.func) in _ARRAY_FROM_LIST and sub.args:
            first = sub.args[0]
            if isinstance(first, (ast.ListComp, ast.GeneratorExp)) and uses(first, loop_vars):
                return "an array built from a list whose length depends on the item"
        elif (isinstance(sub, ast.Name) and sub.id in growing and not _element(sub, parents)
              and not _pads(arg, sub.id) and not loops.fixed_length(sub.id)):
            return f"which grows on every iteration (`{sub.id}`)"
        elif isinstance(sub, ast.Name) and sub.id in loops.shards:
            return loops.shards[sub.id]
    return None


def _element(name: ast.Name, parents: dict[ast.AST, ast.AST]) -> bool:
    """``history[-1]``, ``jnp.stack(history)[-1]``, ``history[-4:]`` or ``len(history)``: one element, a
    window of fixed width or the count of a growing list, not the list."""
    node: ast.AST = name
    while (parent := parents.get(node)) is not None:
        if isinstance(parent, ast.Call) and last_name(parent.func) == "len":
            return True
        if isinstance(parent, ast.Subscript) and parent.value is node:
            index = parent.slice
            if isinstance(index, ast.Slice):
                return _fixed_window(index)
            if not isinstance(index, ast.Tuple) and not (isinstance(index, ast.Constant) and index.value in (None, ...)):
                return True
        node = parent
    return False


def _fixed_window(part: ast.Slice) -> bool:
    """``[-k:]``, ``[:k]``, ``[-k:-j]``: at most k items whatever the length."""
    def const(node: ast.expr | None) -> int | None:
        try:
            value = ast.literal_eval(node) if node is not None else None
        except ValueError:
            return None
        return value if type(value) is int else None

    lower, upper = const(part.lower), const(part.upper)
    if part.step is not None:
        return False
    if lower is not None and lower < 0:
        return part.upper is None or (upper is not None and upper < 0)
    return upper is not None and upper >= 0 and (part.lower is None or (lower is not None and lower >= 0))


def _is_len_of(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Call) and last_name(node.func) == "len" and len(node.args) == 1
            and isinstance(node.args[0], ast.Name) and node.args[0].id == name)


def _pads(expr: ast.AST, name: str) -> bool:
    """``xs + [pad] * (n - len(xs))``, ``np.pad(xs, (0, n - len(xs)))``: ``xs`` brought to a length ``n``."""
    return any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)
        and any(_is_len_of(inner, name) for inner in ast.walk(node.right))
        for node in ast.walk(expr)
    )


def _full_test(test: ast.expr, name: str, emptied: bool) -> bool:
    """``len(name) == n`` (possibly among ``and`` terms): the list is full; ``len(name) >= n`` too when the
    branch empties it again (else every later iteration passes a longer list)."""
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    full = (ast.Eq, ast.GtE) if emptied else (ast.Eq,)
    return any(
        isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], full)
        and _is_len_of(t.left, name)
        for t in terms
    )


def _empties(body: list[ast.stmt], name: str) -> bool:
    """``name = []`` or ``name.clear()`` in ``body``."""
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.List) and not node.value.elts
                and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)):
            return True
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "clear"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name):
            return True
    return False


def _short_test(test: ast.expr, name: str) -> bool:
    """``while len(name) < n``: the loop pads ``name`` up to ``n``."""
    return (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Lt, ast.LtE, ast.NotEq)) and _is_len_of(test.left, name))


class _Loops:
    """The loops around one call: their changing names, ``range(start, stop, step)`` headers,
    ``np.array_split`` shard variables, and names assigned in their bodies."""

    def __init__(self, ctx: ModuleContext, cs: CallSite) -> None:
        # a literal sweep (``for t in (20, 35)``) gives each shape once: still a compilation per value
        self.names = cs.loop_vars | {name for name, values in cs.sweeps.items() if len(set(values)) > 1}
        self.loops = cs.loops
        self.ranges: dict[str, ast.Call] = {}
        self.batches = ctx.batch_loops(cs)
        #: loop variables holding ragged batches -> why
        self.shards: dict[str, str] = self.batches.ragged_items(cs.call)
        self.assigned: dict[str, ast.expr] = {}
        for loop in cs.loops:
            if (
                isinstance(loop, ast.For)
                and isinstance(loop.target, ast.Name)
                and isinstance(loop.iter, ast.Call)
                and last_name(loop.iter.func) == "range"
                and len(loop.iter.args) == 3
            ):
                self.ranges[loop.target.id] = loop.iter
            for stmt in block_statements(loop.body):  # type: ignore[attr-defined]
                if stmt.lineno >= cs.call.lineno:
                    break
                if (
                    isinstance(stmt, ast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                ):
                    self.assigned[stmt.targets[0].id] = stmt.value
        self.function = cs.function
        self.call = cs.call

    def fixed_length(self, name: str) -> bool:
        """``name`` has a fixed length where the call sees it: the call runs only when ``len(name) == n``, or
        a statement before it pads ``name`` to a size (``while len(name) < n: name.append(pad)``,
        ``name += [pad] * (n - len(name))``)."""
        call = self.call
        for loop in self.loops:
            for node in ast.walk(loop):
                if isinstance(node, ast.If) and _full_test(node.test, name, _empties(node.body, name)) and any(
                    call is inner for stmt in node.body for inner in ast.walk(stmt)
                ):
                    return True
                if getattr(node, "end_lineno", call.lineno) >= call.lineno:
                    continue
                if isinstance(node, ast.While) and _short_test(node.test, name) and any(
                    isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                    and inner.func.attr in ("append", "extend") and isinstance(inner.func.value, ast.Name)
                    and inner.func.value.id == name
                    for stmt in node.body for inner in ast.walk(stmt)
                ):
                    return True
                if isinstance(node, (ast.Assign, ast.AugAssign)) and _pads(node.value, name) and any(
                    isinstance(t, ast.Name) and t.id == name
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                ):
                    return True
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "extend" and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == name and _pads(node, name)):
                    return True
        return False

    def ragged_window(self, part: ast.Slice) -> bool:
        """``x[s : s + b]`` with ``for s in range(0, n, b)``: the last window is short unless ``n`` is
        trimmed to a multiple of ``b`` (``n - b + 1``, ``n - n % b``, ``n // b * b``)."""
        lower, upper = part.lower, part.upper
        if not isinstance(lower, ast.Name) or lower.id not in self.ranges:
            return False
        if not (isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add)):
            return False
        header = self.ranges[lower.id]
        step, stop = header.args[2], header.args[1]
        width = upper.right if ast.dump(upper.left) == ast.dump(lower) else upper.left
        return ast.dump(width) == ast.dump(step) and not self._trimmed(stop)

    def _trimmed(self, stop: ast.expr, depth: int = 0) -> bool:
        trimming = (ast.Sub, ast.Mod, ast.FloorDiv, ast.Mult)
        if any(isinstance(n, ast.BinOp) and isinstance(n.op, trimming) for n in ast.walk(stop)):
            return True
        if isinstance(stop, ast.Name) and self.function is not None and depth < 2:
            for stmt in block_statements(self.function.body):
                if (
                    isinstance(stmt, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == stop.id for t in stmt.targets)
                    and self._trimmed(stmt.value, depth + 1)
                ):
                    return True
        # a literal or an expression we cannot read counts as trimmed; a size (`n`, `len(x)`, `x.shape[0]`)
        # is not
        return not isinstance(stop, (ast.Name, ast.Call, ast.Attribute, ast.Subscript))


class VaryingShapeInLoop(Rule):
    """Jitted function called in a loop with a shape that changes.

    ## What it does
    Flags calls of a jitted function inside a loop whose arguments are sliced by the
    loop variable (`x[:i]`), built with a loop-dependent shape (`jnp.zeros(i)`,
    `jax.random.normal(key, (t, 4))`, also for `for t in (20, 35)`), grow
    on every iteration (`acc = jnp.concatenate([acc, y])`; not a sliding window
    `concatenate([buf[1:], y])`), are a ragged last batch (`for s in range(0, n, b): x[s:s + b]`,
    `for i in range(math.ceil(n / b)): x[i * b:(i + 1) * b]`, `while s < len(x): ... s += b`,
    `x[s:min(s + b, n)]`, or the items of a generator of this module yielding such slices),
    arrays built from per-item Python lists (`jnp.array([vocab[w] for w in line.split()])`),
    or `np.array_split` shards.

    ## Why is this bad?
    Shapes are part of the compilation cache key: every new shape traces and
    compiles the function again.

    ## Example
    ```python
    for i in range(1, n):
        total = total + prefix_sum(x[:i])
    ```

    ## Use instead
    ```python
    # pad to a fixed shape and pass the length (or a mask) as a traced argument
    for i in range(1, n):
        total = total + prefix_sum(x, i)
    ```
    """

    code = "JS304"
    name = "varying-shape-in-loop"
    severity = "warning"
    summary = "a jitted function called in a loop with loop-dependent or growing shapes recompiles each time"
    bad = (
        "import jax\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run(x):\n    t = 0\n    for i in range(1, 10):\n        t = t + f(x[:i])\n    return t\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run(y):\n    acc = jnp.zeros(0)\n    for _ in range(10):\n        acc = jnp.concatenate([acc, y])\n        f(acc)\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run():\n    return [f(jnp.ones(i)) for i in range(5)]\n",
        "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run():\n    for T in (20, 35):\n        f(jnp.zeros(T))\n",
        "import jax\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run(key):\n    for T in (20, 35):\n        xs = jax.random.normal(key, (T, 4))\n        f(xs)\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run(x):\n    t = 0\n    for i in range(10):\n        t = t + f(x[i]) + f(x[i:i + 4])\n    return t\n",
        "import jax\n@jax.jit\ndef f(v):\n    return v.sum()\ndef run():\n    for seed in (0, 1):\n        f(jax.random.normal(jax.random.key(seed), (8, 4)))\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for cs in ctx.call_sites:
            if not cs.in_loop:
                continue
            growing = _growing(cs)
            loops = _Loops(ctx, cs)
            varying: list[tuple[ast.expr, str]] = []
            for arg in (*cs.call.args, *(k.value for k in cs.call.keywords)):
                why = _varying(ctx, arg, loops, growing)
                if why is None and isinstance(arg, ast.Name) and arg.id in loops.assigned:
                    why = _varying(ctx, loops.assigned[arg.id], loops, growing)
                if why:
                    varying.append((arg, why))
            if varying:  # one finding per call: a ragged batch of (x, y) is one recompile, not two
                where = ctx.name_of(cs.function) if cs.function is not None else "<module>"
                name = ctx.name_of(cs.site.target) if cs.site.target is not None else "function"
                yield ctx.finding(
                    self,
                    varying[0][0],
                    f"jitted `{name}` called in a loop with {_describe(varying)}: one compilation per shape",
                    where,
                    "pad to a fixed shape (or bucket sizes) and pass the length or a mask",
                )


def _describe(varying: list[tuple[ast.expr, str]]) -> str:
    """```x[s:s + b]` and `y[s:s + b]`, whose last batch is shorter``: arguments that vary for one reason, together."""
    by_reason: dict[str, list[str]] = {}
    for arg, why in varying:
        by_reason.setdefault(why, []).append(f"`{label(arg)}`")
    return "; ".join(" and ".join(labels) + f", {why}" for why, labels in by_reason.items())
