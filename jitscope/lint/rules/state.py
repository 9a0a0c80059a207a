"""JS105-JS107: hidden state -- mutable globals, host randomness and clocks, tracer leaks."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from jitscope.lint.analysis.module_index import block_statements
from jitscope.lint.analysis.qualified_names import last_name, words
from jitscope.lint.analysis.source import match_lines
from jitscope.lint.analysis.taint import FunctionFacts
from jitscope.lint.analysis.taint_calls import MUTATORS
from jitscope.lint.rule import ModuleContext, Rule
from jitscope.lint.rules.common import is_ref_write, mutates, origin, qualify, traced_because
from jitscope.lint.rules.side_effects import calls_in_traced_code
from jitscope.model.lint import Finding

_GLOBAL_RE = re.compile(r"^[ \t]+global[ \t]+([\w, \t]+)", re.MULTILINE)
_MUTATE_RE = re.compile(
    r"^[ \t]+([A-Za-z_]\w*)(?:\.(?:append|extend|insert|update|add|discard|remove|pop|popitem|clear|setdefault|sort"
    r"|reverse)\(|\[[^\n]*?\][ \t]*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=))",
    re.MULTILINE,
)
_RANDOM_PREFIXES = ("random.", "numpy.random.", "secrets.")
_RANDOM_EXACT = words(
    "time.time time.time_ns time.perf_counter time.perf_counter_ns time.monotonic time.monotonic_ns "
    "time.process_time time.process_time_ns time.localtime time.gmtime time.ctime "
    "datetime.datetime.now datetime.datetime.utcnow datetime.datetime.today datetime.date.today "
    "uuid.uuid1 uuid.uuid4 os.urandom os.getrandom"
)
_ESCAPES = ("self", "global", "closure")


def mutable_globals(ctx: ModuleContext) -> set[str]:
    """Module-level names that some function rebinds (``global``) or mutates in place."""
    text = ctx.index.parsed.text
    found: set[str] = set()
    import_time: set[str] | None = None
    for pattern in (_GLOBAL_RE, _MUTATE_RE):
        for line, m in match_lines(pattern, text):
            chain = ctx.index.statement_chain(line)
            functions = [s for s in chain if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if not functions:
                continue
            if import_time is None:
                import_time = _import_time_calls(ctx)
            top = chain[0]
            name = top.name if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
            if name in import_time or "register" in name.lower():
                continue  # a registry filled while modules are imported, not state that changes later
            if pattern is _GLOBAL_RE:
                found.update(n.strip() for n in m.group(1).split(",") if n.strip())
            else:
                found.add(m.group(1))
    return {n for n in found if n in ctx.index.module_values}


def _import_time_calls(ctx: ModuleContext) -> set[str]:
    """Names called or used as decorators by module-level code (run once, at import)."""
    names: set[str] = set()
    for stmt in block_statements(ctx.index.parsed.tree.body):
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
            for node in ast.walk(root):
                if isinstance(node, ast.Call):
                    names.add(last_name(node.func))
    return names


class MutableGlobalRead(Rule):
    """Read of mutable global state inside traced code.

    ## What it does
    Flags reads, inside a traced function, of module-level names that some function
    in the module reassigns (`global x; x = ...`) or mutates in place
    (`x.append(...)`, `x[k] = ...`).

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
        "import jax\nmode = 'a'\ndef set_mode(m):\n    global mode\n    mode = m\n@jax.jit\ndef f(x):\n    return x if mode == 'a' else -x\n",
    )
    good = (
        "import jax\nTABLE = {'a': 1.0}\nTABLE['b'] = 2.0\n@jax.jit\ndef f(x):\n    return x * TABLE['a']\n",
        "import jax\nimport jax.numpy as jnp\nEPS = 1e-6\n@jax.jit\ndef f(x):\n    return x + EPS\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        index = ctx.index
        candidates: list[tuple[FunctionFacts, ast.Name]] = []
        for facts in ctx.functions:
            seen: set[str] = set()
            for node, parent in ctx.body(facts):
                if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id in seen:
                    continue
                name = node.id
                if (
                    name not in index.module_values
                    or name in index.defs
                    or name in index.classes
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
        mutable = mutable_globals(ctx)
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


class HostRandomnessInTracedCode(Rule):
    """Host randomness or clock inside traced code.

    ## What it does
    Flags calls to Python's `random`, `numpy.random`, `secrets`, `time.time()` and
    other clocks, `datetime.now()`, `uuid` and `os.urandom` inside a traced function.

    ## Why is this bad?
    The value is drawn once, while tracing, and baked into the compiled computation
    as a constant: every later call reuses the same "random" number or timestamp.

    ## Example
    ```python
    @jax.jit
    def dropout(x):
        keep = np.random.rand(*x.shape) > 0.1
        return jnp.where(keep, x, 0.0)
    ```

    ## Use instead
    ```python
    @jax.jit
    def dropout(key, x):
        keep = jax.random.bernoulli(key, 0.9, x.shape)
        return jnp.where(keep, x, 0.0)
    ```
    """

    code = "JS106"
    name = "host-randomness-in-traced-code"
    severity = "error"
    summary = "host random numbers, clocks and uuids inside traced code are frozen at trace time"
    bad = (
        "import jax, numpy as np\n@jax.jit\ndef f(x):\n    return x + np.random.rand()\n",
        "import jax, random\n@jax.jit\ndef f(x):\n    return x * random.random()\n",
        "import jax, time\n@jax.jit\ndef f(x):\n    t = time.time()\n    return x + t\n",
        "import jax\nfrom datetime import datetime\n@jax.jit\ndef f(x):\n    stamp = datetime.now()\n    return x\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(key, x):\n    return x + jax.random.normal(key, x.shape)\n",
        "import jax\nfrom jax import random\n@jax.jit\ndef f(key, x):\n    return x + random.uniform(key)\n",
        "import time\ndef timed(f, x):\n    t = time.time()\n    return f(x), time.time() - t\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts, call in calls_in_traced_code(ctx):
            qualified = qualify(ctx, facts, call.func)
            if not qualified:
                continue
            if qualified in _RANDOM_EXACT or qualified.startswith(_RANDOM_PREFIXES):
                yield ctx.finding(
                    self,
                    call,
                    f"`{qualified}()` in `{facts.qualname}` is evaluated once, while tracing, and frozen into the "
                    "compiled computation" + traced_because(facts),
                    facts.qualname,
                    "use jax.random with a key passed in as an argument; pass times and ids as arguments",
                )


class TracerLeak(Rule):
    """A traced value stored where it outlives the traced call.

    ## What it does
    Flags traced values stored on `self`, in module globals, in closed-over
    containers, or in `global`/`nonlocal` variables from inside a traced function.

    ## Why is this bad?
    The stored object is a tracer. Using it after tracing ends raises
    `UnexpectedTracerError`, often far away from where it leaked.

    ## Example
    ```python
    class Model:
        @functools.partial(jax.jit, static_argnums=0)
        def __call__(self, x):
            self.last = x * 2
            return self.last
    ```

    ## Use instead
    ```python
    class Model:
        @functools.partial(jax.jit, static_argnums=0)
        def __call__(self, x):
            return x * 2   # return values instead of storing them
    ```
    """

    code = "JS107"
    name = "tracer-leak"
    severity = "error"
    summary = "traced values stored on self, in globals or closed-over containers outlive the trace"
    bad = (
        "import jax\nfrom functools import partial\nclass M:\n    @partial(jax.jit, static_argnums=0)\n    def f(self, x):\n        self.last = x\n        return x\n",
        "import jax\ncache = {}\n@jax.jit\ndef f(x):\n    cache['x'] = x * 2\n    return x\n",
        "import jax\nfrom jax import lax\n@jax.jit\ndef f(xs):\n    seen = []\n    def body(c, x):\n        seen.append(x)\n        return c + x, x\n    return lax.scan(body, 0.0, xs)\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(xs):\n    parts = []\n    def add(v):\n        parts.append(v)\n    add(xs)\n    return parts\n",
        "import jax\n@jax.jit\ndef f(x):\n    out = {}\n    out['y'] = x * 2\n    return out\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            escapes = set(_ESCAPES)
            if facts.boundary:
                escapes.add("closure-fresh")
            declared = facts.globals_declared | facts.nonlocals_declared
            for node, parent in ctx.body(facts):
                target: ast.expr | None = None
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    if node.value is None or not facts.is_traced(node.value):
                        continue
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Subscript) and is_ref_write(ctx, t):
                            continue
                        if (
                            isinstance(t, ast.Name)
                            and t.id in declared
                            or isinstance(t, (ast.Attribute, ast.Subscript))
                            and origin(ctx, facts, t.value) in escapes
                        ):
                            target = t
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(parent, ast.Expr)
                    and isinstance(node.func, ast.Attribute)
                ):
                    if not mutates(ctx, facts, node) or origin(ctx, facts, node.func.value) not in escapes:
                        continue
                    if any(facts.is_traced(a) for a in (*node.args, *(k.value for k in node.keywords))):
                        target = node.func.value
                if target is None:
                    continue
                yield ctx.finding(
                    self,
                    node,
                    f"`{facts.qualname}` stores a traced value in `{ast.unparse(target)}`, which outlives the trace; "
                    "using it later raises UnexpectedTracerError" + traced_because(facts),
                    facts.qualname,
                    "return the value from the traced function instead of storing it",
                )
