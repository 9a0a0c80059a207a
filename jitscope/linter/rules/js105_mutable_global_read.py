"""JS105 `mutable-global-read`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from jitscope.linter.context import (
    MUTATORS,
    ModuleContext,
    TracedFunction,
    block_statements,
    descendants,
    last_name,
    match_lines,
    traced_because,
)
from jitscope.linter.rule import Rule
from jitscope.model.lint import Finding

_GLOBAL_RE = re.compile(r"^[ \t]+global[ \t]+([\w, \t]+)", re.MULTILINE)


_MUTATED = (
    r"(?:\.(?:append|extend|insert|update|add|discard|remove|pop|popitem|clear|setdefault|sort"
    r"|reverse)\(|\[[^\n]*?\][ \t]*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=))"
)

if TYPE_CHECKING:  # the tracer's records: imported only by lint --trace, not by static lint
    from jitscope.linter.trace_context import TraceContext
_IDENTIFIER = r"[A-Za-z_]\w*"
_MUTATE_RE = re.compile(rf"^[ \t]+({_IDENTIFIER}){_MUTATED}", re.MULTILINE)


@functools.lru_cache(maxsize=64)
def _mutate_regex(names: frozenset[str]) -> re.Pattern[str]:
    """``_MUTATE_RE`` for these names only (each one that ``_IDENTIFIER`` matches whole): the same
    matches for them, found without trying every indented line's first word (2-4x faster)."""
    eligible = sorted(n for n in names if re.fullmatch(_IDENTIFIER, n))
    alternation = "|".join(map(re.escape, eligible)) or "(?!)"
    return re.compile(rf"^[ \t]+({alternation}){_MUTATED}", re.MULTILINE)


def mutable_globals(ctx: ModuleContext, names: Iterable[str] | None = None) -> set[str]:
    """Module-level names that some function rebinds (``global``) or mutates in place; with ``names``,
    only those of them that are mutated in place are looked for (a caller that asks about no others)."""
    text = ctx.text
    found: set[str] = set()
    import_time: set[str] | None = None
    mutate = _MUTATE_RE if names is None else _mutate_regex(frozenset(names))
    # no `global` statement without the word: skip that scan (a regex pass over the whole file)
    for pattern in (_GLOBAL_RE, mutate) if "global" in text else (mutate,):
        for line, m in match_lines(pattern, text):
            chain = ctx.statements_around(line)
            functions = [s for s in chain if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if not functions:
                continue
            if import_time is None:
                import_time = _import_time_calls(ctx)
            top = chain[0]
            name = top.name if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
            if name in import_time or "register" in name.lower():
                continue  # a registry filled while modules are imported, not state that changes later
            if pattern is _GLOBAL_RE and _is_setter(functions[-1]):
                continue  # a configuration setter (`set_x(value)`), meant to be called before compiling
            if pattern is _GLOBAL_RE:
                found.update(n.strip() for n in m.group(1).split(",") if n.strip())
            else:
                found.add(m.group(1))
    return {n for n in found if n in ctx.module_values}


def _is_setter(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``def set_use_cholesky(value): global _USE_CHOLESKY; _USE_CHOLESKY = value``: a function that only
    sets module switches to its arguments or to constants (a docstring aside). Such a switch is
    configuration, like ``jax.config``: the program sets it before it compiles, and the value being
    baked in when JAX traces is what it asks for. A flag flipped by code that also does other work
    (a counter, a mode changed mid-run) is still reported."""
    params = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    body = func.body[1:] if func.body and isinstance(func.body[0], ast.Expr) else func.body
    for stmt in body:
        if isinstance(stmt, ast.Global) or (
            isinstance(stmt, ast.If) and not stmt.orelse and all(isinstance(s, ast.Raise) for s in stmt.body)
        ):
            continue  # `if not isinstance(value, bool): raise ValueError(...)`: a setter's validation
        if not (
            isinstance(stmt, ast.Assign)
            and all(isinstance(t, ast.Name) for t in stmt.targets)
            and (isinstance(stmt.value, ast.Constant) or (isinstance(stmt.value, ast.Name) and stmt.value.id in params))
        ):
            return False
    return bool(body)


def _import_time_calls(ctx: ModuleContext) -> set[str]:
    """Names called or used as decorators by module-level code (run once, at import)."""
    names: set[str] = set()
    for stmt in block_statements(ctx.tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            roots: list[ast.AST] = list(stmt.decorator_list)
            for dec in stmt.decorator_list:
                names.add(last_name(dec.func if isinstance(dec, ast.Call) else dec))
            if isinstance(stmt, ast.ClassDef):
                for sub in stmt.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        roots.extend(sub.decorator_list)
        else:
            roots = [stmt]
        for root in roots:
            for node in descendants(root):
                if isinstance(node, ast.Call):
                    names.add(last_name(node.func))
    return names


class MutableGlobalRead(Rule):
    """Read of mutable global state inside traced code.

    ## What it does
    Flags reads, inside a traced function, of module-level names that some function
    in the module reassigns (`global x; x = ...`) or mutates in place
    (`x.append(...)`, `x[k] = ...`). A switch that only a dedicated setter changes
    (`def set_x(value): global X; X = value`) is configuration, like `jax.config`: it is
    set before compiling, and baking it in is what it asks for, so it is not reported.

    ## Why is this bad?
    JAX reads the value once, while tracing, and bakes it into the compiled
    computation as a constant. Later changes to the global are ignored until
    something else forces a retrace.

    ## Example
    ```python
    SCALE = {"value": 1.0}

    def set_scale(v):
        SCALE["value"] = v

    @jax.jit
    def apply(x):
        return x * SCALE["value"]
    ```

    ## Use instead
    ```python
    @jax.jit
    def apply(x, scale):
        return x * scale
    ```
    """

    code = "JS105"
    name = "mutable-global-read"
    severity = "warning"
    summary = "reads of module state that is reassigned or mutated elsewhere are baked in at trace time"
    bad = (
        "import jax\nSCALE = {'v': 1.0}\ndef set_scale(v):\n    SCALE['v'] = v\n@jax.jit\ndef f(x):\n    return x * SCALE['v']\n",
        "import jax\nmode = 'a'\ndef run(xs):\n    global mode\n    out = [f(x) for x in xs]\n    mode = 'b'\n    return out + [f(x) for x in xs]\n@jax.jit\ndef f(x):\n    return x if mode == 'a' else -x\n",
    )
    good = (
        "import jax\nmode = 'a'\ndef set_mode(m):\n    \"\"\"Call before compiling.\"\"\"\n    global mode\n    mode = m\n@jax.jit\ndef f(x):\n    return x if mode == 'a' else -x\n",
        "import jax\nTABLE = {'a': 1.0}\nTABLE['b'] = 2.0\n@jax.jit\ndef f(x):\n    return x * TABLE['a']\n",
        "import jax\nimport jax.numpy as jnp\nEPS = 1e-6\n@jax.jit\ndef f(x):\n    return x + EPS\n",
    )

    def check_trace(self, trace: TraceContext) -> Iterator[Finding]:
        if trace.jaxpr_changed:
            yield trace.finding(
                self,
                f"tracing {trace.target} twice with identical inputs gave different jaxprs: it depends on "
                "state that changes between traces (a mutable global, host randomness, a clock)",
                trace.definition,
                "pass the changing value as an argument",
            )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        candidates: list[tuple[TracedFunction, ast.Name]] = []
        for facts in ctx.functions:
            seen: set[str] = set()
            for node, parent in ctx.body_nodes(facts, (ast.Name,)):
                if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id in seen:
                    continue
                name = node.id
                if (
                    name not in ctx.module_values
                    or ctx.is_function(name)
                    or name in facts.local_names
                    or name in facts.closure
                    or name in facts.comp_names
                    or name in facts.globals_declared
                ):
                    continue
                if isinstance(parent, ast.Attribute) and parent.attr in MUTATORS:
                    continue
                if isinstance(parent, (ast.Subscript, ast.Attribute)) and isinstance(
                    parent.ctx, (ast.Store, ast.Del)
                ):
                    continue
                seen.add(name)
                candidates.append((facts, node))
        if not candidates:
            return
        mutable = mutable_globals(ctx, {node.id for _, node in candidates})
        for facts, node in candidates:
            if node.id in mutable:
                yield ctx.finding(
                    self,
                    node,
                    f"`{facts.qualname}` reads module global `{node.id}`, which is changed elsewhere in the module; "
                    "its value is baked in when JAX traces the function" + traced_because(facts),
                    facts.qualname,
                    f"pass `{node.id}` as an argument (static if it is not an array)",
                )
