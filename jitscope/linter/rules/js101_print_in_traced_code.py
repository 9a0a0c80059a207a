"""JS101 `print-in-traced-code`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    ModuleContext,
    TracedFunction,
    label,
)
from jitscope.linter.fix_builder import module_alias, replace, segment
from jitscope.linter.rule import Rule
from jitscope.model.effect_catalogue import LOG_METHODS
from jitscope.model.effects import EffectKind
from jitscope.model.lint import Finding, Fix


class PrintInTracedCode(Rule):
    """Print or log inside traced code.

    ## What it does
    Flags `print`, `pprint`, `logging` calls and writes to `sys.stdout`/`sys.stderr`
    inside a function that JAX traces (jit, vmap, a lax control-flow body, ...).

    ## Why is this bad?
    The call runs once, while JAX traces the function, and prints tracers such as
    `Traced<ShapedArray(float32[3])>` instead of values. Later calls run the compiled
    computation and print nothing.

    ## Example
    ```python
    @jax.jit
    def step(x):
        print("x =", x)
        return x * 2
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(x):
        jax.debug.print("x = {}", x)
        return x * 2
    ```

    ## Fix
    `jitscope lint --fix` rewrites `print(...)` to `jax.debug.print(...)` where the text printed is
    exactly what the function would print if run eagerly, on every call: the arguments are string or
    number literals (copied into the format, braces doubled) and traced arrays (`{!s}`: `str()` as
    `print` shows them), and f-strings of traced arrays (`f"{x:.3f}"` -> `"{:.3f}", x`: the same
    `format()` call); `sep=` a string literal. No fix when an argument is a Python value (its text would
    differ), for `!r` (JAX's repr differs), `file=`, `end=`, `flush=`, or a print of no traced value at
    all (likely meant for trace time). Several prints in one function get `ordered=True` (unordered
    debug prints may come out in any order), except under `pmap`, which has no ordered effects.
    """

    code = "JS101"
    name = "print-in-traced-code"
    severity = "warning"
    fixable = True
    summary = "print, logging or sys.stdout/stderr writes inside traced code run only while tracing"
    effect_kinds = frozenset({EffectKind.PRINT, EffectKind.STDOUT, EffectKind.LOGGING})
    bad = (
        "import jax\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n",
        "import logging\nimport jax\nlog = logging.getLogger(__name__)\n@jax.jit\ndef f(x):\n    log.info('x=%s', x)\n    return x\n",
        "import sys\nfrom jax import lax\ndef body(c, x):\n    sys.stdout.write('step')\n    return c + x, x\ndef run(xs):\n    return lax.scan(body, 0.0, xs)\n",
        "import jax\ndef helper(x):\n    print('helper', x)\n    return x + 1\n@jax.jit\ndef f(x):\n    return helper(x)\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(x):\n    jax.debug.print('x = {}', x)\n    return x\n",
        "import jax\ndef g(x):\n    print(x)\n    return x\n",
        "import jax\ndef host(x):\n    print(x)\n@jax.jit\ndef f(x):\n    jax.debug.callback(host, x)\n    return x\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        return self.call_findings(ctx, lambda facts, call: self._what(ctx, facts, call),
                                  "runs only while JAX traces it, not on every call",
                                  'use jax.debug.print("{}", value) to print values at run time')

    def _what(self, ctx: ModuleContext, facts: TracedFunction, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name) and (wrapped := ctx.partial_of(facts, func.id)) is not None:
            inner = self._called(ctx, facts, wrapped)
            if inner:
                return f"{func.id}() (functools.partial of {inner})"
        if not ctx.runs_on_host(func, facts):
            # `jax.tree_util.tree_map(print, grads)`, `list(map(print, xs))`: called while tracing
            for arg in call.args:
                handed = self._called(ctx, facts, arg)
                if handed:
                    return f"{handed} handed to {ast.unparse(func)}()"
        return self._called(ctx, facts, func)

    def _called(self, ctx: ModuleContext, facts: TracedFunction, func: ast.expr) -> str | None:
        """What calling ``func`` prints (``print()``, ``logging.info()``...), or None."""
        catalogued = self.catalogued_call(ctx, facts, func)
        if catalogued:
            return catalogued
        if isinstance(func, ast.Attribute) and func.attr in LOG_METHODS and isinstance(func.value, ast.Name):
            base = func.value.id
            if ctx.is_logger(base) and base not in facts.local_names and base not in facts.closure:
                return f"logging call {base}.{func.attr}()"
        return None

    def fix(self, ctx: ModuleContext, facts: TracedFunction, node: ast.expr,
            parents: dict[int, ast.AST]) -> Fix | str | None:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"):
            return None  # logging, sys.stdout.write: no exact jax.debug.print form
        if not isinstance(parents.get(id(node)), ast.Expr):
            return "the value print() returns is used"
        sep = " "
        for keyword in node.keywords:
            if keyword.arg == "sep" and isinstance(keyword.value, ast.Constant) and isinstance(
                    keyword.value.value, str):
                sep = keyword.value.value
            else:
                return f"print({keyword.arg or '**'}=...) has no jax.debug.print form"
        parts: list[str] = []
        args: list[str] = []
        for arg in node.args:
            problem = _translate(facts, arg, parts, args, ctx)
            if problem:
                return problem
        if not args:
            return "it prints no traced value (a message meant for trace time?)"
        fmt = _escape(sep).join(parts)
        prints = _prints(ctx, facts)
        if prints > 1 and facts.kind == "pmap":
            return "several prints under pmap, which has no ordered effects"
        found = module_alias(ctx, "jax", "jax", facts)
        if found is None:
            return "`jax` names something else here"
        jax, imports = found
        ordered = ", ordered=True" if prints > 1 else ""
        text = f"{jax}.debug.print({_literal(fmt)}, {', '.join(args)}{ordered})"
        return Fix(f"Replace with `{jax}.debug.print(...)`", (replace(ctx, node, text), *imports))


def _prints(ctx: ModuleContext, facts: TracedFunction) -> int:
    """How many prints ``facts``'s body has (counted once per function, not once per print fixed)."""
    key = f"JS101.prints.{id(facts.func)}"
    count: int | None = ctx.memo.get(key)
    if count is None:
        count = sum(1 for n, _ in ctx.body(facts) if isinstance(n, ast.Call) and _is_print(ctx, facts, n))
        ctx.memo[key] = count
    return count


def _is_print(ctx: ModuleContext, facts: TracedFunction, call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name) and func.id == "print" and ctx.is_builtin(facts, "print"):
        return True
    return ctx.qualified_name(func, facts) in ("jax.debug.print", "jax.debug.callback")


def _translate(facts: TracedFunction, arg: ast.expr, parts: list[str], args: list[str],
               ctx: ModuleContext) -> str | None:
    """Add what ``print`` shows for ``arg`` to the format ``parts`` (and its values to ``args``), or say why
    it cannot be shown the same way."""
    if isinstance(arg, ast.Constant):
        parts.append(_escape(str(arg.value)))
        return None
    if isinstance(arg, ast.JoinedStr):
        piece: list[str] = []
        for value in arg.values:
            if isinstance(value, ast.Constant):
                piece.append(_escape(str(value.value)))
                continue
            if not isinstance(value, ast.FormattedValue):
                return "an f-string part could not be read"
            if value.conversion not in (-1, ord("s")):
                return f"`{{{label(value.value)}!r}}` shows JAX's repr, which jax.debug.print would not"
            spec = ""
            if value.format_spec is not None:
                if not (isinstance(value.format_spec, ast.JoinedStr) and all(
                        isinstance(v, ast.Constant) for v in value.format_spec.values)):
                    return "the f-string's format spec is computed"
                spec = ":" + "".join(str(v.value) for v in value.format_spec.values)  # type: ignore[attr-defined]
                if "{" in spec or "}" in spec:
                    return "the f-string's format spec has braces"
            problem = _value(facts, value.value, args, ctx)
            if problem:
                return problem
            piece.append("{" + ("!s" if value.conversion == ord("s") else "") + spec + "}")
        parts.append("".join(piece))
        return None
    if isinstance(arg, ast.Starred):
        return "a *args argument"
    problem = _value(facts, arg, args, ctx)
    if problem:
        return problem
    parts.append("{!s}")
    return None


def _value(facts: TracedFunction, node: ast.expr, args: list[str], ctx: ModuleContext) -> str | None:
    if not facts.is_traced(node):
        return f"`{label(node)}` is not a traced array (jax.debug.print would show it differently)"
    text = segment(ctx, node)
    if text is None:
        return "its text could not be taken apart"
    args.append(f"({text})" if isinstance(node, ast.Tuple | ast.NamedExpr) or "\n" in text else text)
    return None


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _literal(text: str) -> str:
    """A Python string literal for ``text``, in double quotes where that needs no escaping."""
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        literal = '"' + literal[1:-1].replace("\\'", "'") + '"'
    return literal
