"""Batches whose last one is shorter: the shapes a hand-written batch loop hands to a jitted call.

JS304 asks, for a slice or a loop variable seen at a call inside a loop, whether its length
changes on the last iteration. The forms recognised here:

- ``for i in range(n_batches): x[i * b : (i + 1) * b]`` where ``n_batches`` rounds up
  (``math.ceil(n / b)``, ``(n + b - 1) // b``, ``-(-n // b)``);
- ``while s < len(x): ... x[s : s + b] ... s += b``;
- ``x[s:e]`` with ``e = min(s + b, n)`` (the last window is cut at ``n``);
- the items of a generator of this module that yields such slices
  (``for xb, yb in iterate_minibatches(x, y, 128)``);
- the shards of ``np.array_split`` (a ``for`` or a comprehension).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.analysis.module_index import DefNode, block_statements, target_names
from jitscope.linter.analysis.qualified_names import last_name

_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _same(a: ast.AST | None, b: ast.AST | None) -> bool:
    """The same expression text (``s`` read and ``s`` assigned are the same name)."""
    return a is not None and b is not None and ast.unparse(a) == ast.unparse(b)


def _assignments(body: list[ast.stmt], name: str) -> Iterator[ast.expr]:
    for stmt in block_statements(body):
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ):
            yield stmt.value


def _rounds_up(expr: ast.expr, function: DefNode | None, depth: int = 0) -> bool:
    """``math.ceil(n / b)``, ``(n + b - 1) // b``, ``-(-n // b)``, ``int(np.ceil(n / b))`` (or a name bound to one)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and last_name(node.func) == "ceil":
            return True
        inner = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else None
        if (
            isinstance(inner, ast.BinOp)
            and isinstance(inner.op, ast.FloorDiv)
            and isinstance(inner.left, ast.UnaryOp)
            and isinstance(inner.left.op, ast.USub)
        ):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            left = node.left
            if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Sub):
                left = left.left  # (n + b - 1) // b
            if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add) and _same(left.right, node.right):
                return True
    if isinstance(expr, ast.Name) and function is not None and depth < 2:
        return any(_rounds_up(v, function, depth + 1) for v in _assignments(function.body, expr.id))
    return False


def _scaled(expr: ast.expr | None, var: str) -> ast.expr | None:
    """``var * b`` (or ``b * var``) -> ``b``."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        if isinstance(expr.left, ast.Name) and expr.left.id == var:
            return expr.right
        if isinstance(expr.right, ast.Name) and expr.right.id == var:
            return expr.left
    return None


def _next_scaled(expr: ast.expr | None, var: str) -> ast.expr | None:
    """``(var + 1) * b`` -> ``b``."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        for factor, other in ((expr.left, expr.right), (expr.right, expr.left)):
            if (
                isinstance(factor, ast.BinOp)
                and isinstance(factor.op, ast.Add)
                and isinstance(factor.left, ast.Name)
                and factor.left.id == var
                and isinstance(factor.right, ast.Constant)
                and factor.right.value == 1
            ):
                return other
    return None


def _window_width(lower: ast.expr | None, upper: ast.expr | None) -> ast.expr | None:
    """``x[s : s + b]`` -> ``b``."""
    if lower is None or not (isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add)):
        return None
    if _same(upper.left, lower):
        return upper.right
    if _same(upper.right, lower):
        return upper.left
    return None


class BatchLoops:
    """The loops around one call (outermost first) and the function holding them."""

    def __init__(self, loops: list[ast.stmt], function: DefNode | None, defs: dict[str, DefNode]) -> None:
        self.loops = loops
        self.function = function
        self.defs = defs

    def ragged_slice(self, part: ast.Slice) -> bool:
        """A slice whose last window is shorter (see the module docstring)."""
        lower, upper = part.lower, part.upper
        if part.step is not None or lower is None or upper is None:
            return False
        for loop in self.loops:
            if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name):
                var = loop.target.id
                it = loop.iter
                if (
                    isinstance(it, ast.Call)
                    and last_name(it.func) == "range"
                    and len(it.args) == 1
                    and _rounds_up(it.args[0], self.function)
                ):
                    width = _scaled(lower, var)
                    if width is not None and _same(width, _next_scaled(upper, var)):
                        return True
            elif isinstance(loop, ast.While) and self._counts_up(loop, lower, upper):
                return True
        return self._cut_at_end(lower, upper, self.loops)

    def _counts_up(self, loop: ast.While, lower: ast.expr, upper: ast.expr) -> bool:
        """``while s < len(x): ... x[s : s + b] ... s += b``."""
        test = loop.test
        if not (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Lt, ast.LtE))
            and isinstance(test.left, ast.Name)
            and _same(test.left, lower)
        ):
            return False
        width = _window_width(lower, upper)
        if width is None or _trimmed(test.comparators[0], self.function):
            return False
        return any(
            isinstance(stmt, ast.AugAssign)
            and isinstance(stmt.op, ast.Add)
            and _same(stmt.target, lower)
            and _same(stmt.value, width)
            for stmt in block_statements(loop.body)
        )

    def _cut_at_end(self, lower: ast.expr, upper: ast.expr, loops: list[ast.stmt]) -> bool:
        """``x[s : min(s + b, n)]``, or ``x[s:e]`` with ``e = min(s + b, n)`` assigned in the loop."""
        if _clipped_window(lower, upper):
            return True
        if not isinstance(upper, ast.Name):
            return False
        return any(
            _clipped_window(lower, value)
            for loop in loops
            for value in _assignments(getattr(loop, "body", []), upper.id)
        )

    def ragged_items(self, call: ast.Call) -> dict[str, str]:
        """Loop variables (of the loops or of a comprehension around ``call``) that are ragged batches,
        with why: ``np.array_split`` shards or the items of a generator yielding ragged slices."""
        names: dict[str, str] = {}
        headers: list[tuple[ast.expr, ast.expr]] = [
            (loop.target, loop.iter) for loop in self.loops if isinstance(loop, (ast.For, ast.AsyncFor))
        ]
        scope: ast.AST | None = (
            self.function if self.function is not None else (self.loops[0] if self.loops else None)
        )
        if scope is not None:
            for node in ast.walk(scope):
                if isinstance(node, _COMPS) and any(sub is call for sub in ast.walk(node)):
                    headers.extend((gen.target, gen.iter) for gen in node.generators)
        for target, it in headers:
            if not isinstance(it, ast.Call):
                continue
            if last_name(it.func) == "array_split":
                why = "a shard of np.array_split, whose shards differ in length"
            elif self._yields_ragged(it):
                why = f"a batch from `{last_name(it.func)}`, whose last batch is shorter"
            else:
                continue
            names.update(dict.fromkeys(target_names(target), why))
        return names

    def _yields_ragged(self, call: ast.Call) -> bool:
        """``call`` calls a generator of this module that yields ragged slices."""
        func = self.defs.get(call.func.id) if isinstance(call.func, ast.Name) else None
        if func is None:
            return False
        for node in ast.walk(func):
            if isinstance(node, (ast.Yield, ast.YieldFrom)) and node.value is not None:
                loops: list[ast.stmt] = [
                    n for n in ast.walk(func) if isinstance(n, (ast.For, ast.While)) and _contains(n, node)
                ]
                inner = BatchLoops(loops, func, self.defs)
                for sub in ast.walk(node.value):
                    if (
                        isinstance(sub, ast.Subscript)
                        and isinstance(sub.slice, ast.Slice)
                        and (inner.ragged_slice(sub.slice) or inner.range_window(sub.slice))
                    ):
                        return True
        return False

    def range_window(self, part: ast.Slice) -> bool:
        """``x[s : s + b]`` with ``for s in range(0, n, b)`` and ``n`` not trimmed to a multiple of ``b``."""
        width = _window_width(part.lower, part.upper)
        if width is None or not isinstance(part.lower, ast.Name):
            return False
        for loop in self.loops:
            if (
                isinstance(loop, ast.For)
                and isinstance(loop.target, ast.Name)
                and loop.target.id == part.lower.id
                and isinstance(loop.iter, ast.Call)
                and last_name(loop.iter.func) == "range"
                and len(loop.iter.args) == 3
            ):
                return _same(loop.iter.args[2], width) and not _trimmed(loop.iter.args[1], self.function)
        return False


def _clipped_window(lower: ast.expr, upper: ast.expr) -> bool:
    """``min(s + b, n)`` as the end of a window starting at ``s``: the last window is cut short."""
    return (
        isinstance(upper, ast.Call)
        and last_name(upper.func) == "min"
        and len(upper.args) == 2
        and any(_window_width(lower, a) is not None for a in upper.args)
    )


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(sub is inner for sub in ast.walk(outer))


def _trimmed(stop: ast.expr, function: DefNode | None, depth: int = 0) -> bool:
    """``n - b + 1``, ``n - n % b``, ``n // b * b``: a bound cut to whole windows (or a name bound to one)."""
    trimming = (ast.Sub, ast.Mod, ast.FloorDiv, ast.Mult)
    if any(isinstance(n, ast.BinOp) and isinstance(n.op, trimming) for n in ast.walk(stop)):
        return True
    if isinstance(stop, ast.Name) and function is not None and depth < 2:
        return any(_trimmed(v, function, depth + 1) for v in _assignments(function.body, stop.id))
    return False
