"""JS101-JS107: side effects inside traced code.

Python side effects run once, while JAX traces the function; the compiled
computation that runs on later calls contains none of them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.lint.calls import MUTATORS
from jitscope.lint.rule import ModuleContext, Rule
from jitscope.lint.rules.common import is_builtin, origin, qualify, traced_because
from jitscope.lint.taint import ARRAY, CONTAINER, FunctionFacts
from jitscope.model.lint import Finding

_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})
_PRINTERS = frozenset({"pprint.pprint", "pprint.pp", "rich.print", "builtins.print", "tqdm.tqdm.write"})
_STREAM_METHODS = frozenset({"write", "writelines", "flush"})
_IO_PREFIXES = (
    "subprocess.", "shutil.", "socket.", "urllib.request.", "requests.", "httpx.", "http.client.", "ftplib.",
    "smtplib.", "tempfile.", "glob.", "sqlite3.", "aiohttp.",
)  # fmt: skip
_IO_EXACT = frozenset(
    {"io.open", "pickle.load", "pickle.dump", "json.load", "json.dump", "numpy.save", "numpy.savez",
     "numpy.savez_compressed", "numpy.savetxt", "numpy.load", "numpy.loadtxt", "numpy.genfromtxt", "numpy.fromfile",
     "builtins.open", "webbrowser.open"}
)  # fmt: skip
_OS_PATH_IO = frozenset(
    {"exists", "lexists", "isfile", "isdir", "islink", "ismount", "getsize", "getmtime", "getatime", "getctime",
     "realpath", "samefile"}
)  # fmt: skip
_OS_PURE = frozenset(
    {"fspath", "fsencode", "fsdecode", "getenv", "cpu_count", "getpid", "getcwd", "get_terminal_size", "sep",
     "linesep", "name", "urandom", "getrandom", "environ", "PathLike", "strerror"}
)  # fmt: skip
_PATH_IO_METHODS = frozenset(
    {"read_text", "write_text", "read_bytes", "write_bytes", "open", "mkdir", "unlink", "touch", "rmdir", "iterdir",
     "glob", "rglob", "exists", "is_file", "is_dir", "rename", "replace", "stat"}
)  # fmt: skip


def calls_in_traced_code(ctx: ModuleContext) -> Iterator[tuple[FunctionFacts, ast.Call]]:
    for facts in ctx.functions:
        for node, _ in ctx.body(facts):
            if isinstance(node, ast.Call):
                yield facts, node


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
    """

    code = "JS101"
    name = "print-in-traced-code"
    severity = "warning"
    summary = "print, logging or sys.stdout/stderr writes inside traced code run only while tracing"
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
        for facts, call in calls_in_traced_code(ctx):
            what = self._what(ctx, facts, call)
            if what:
                yield ctx.finding(
                    self,
                    call,
                    f"{what} in `{facts.qualname}` runs only while JAX traces it, not on every call"
                    + traced_because(facts),
                    facts.qualname,
                    "use jax.debug.print(\"{}\", value) to print values at run time",
                )

    @staticmethod
    def _what(ctx: ModuleContext, facts: FunctionFacts, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name) and func.id == "print" and is_builtin(ctx, facts, "print"):
            return "print()"
        qualified = qualify(ctx, facts, func)
        if qualified:
            if qualified in _PRINTERS:
                return f"{qualified}()"
            head, _, last = qualified.rpartition(".")
            if head in ("logging", "absl.logging") and last in _LOG_METHODS:
                return f"{qualified}()"
            if head in ("sys.stdout", "sys.stderr") and last in _STREAM_METHODS:
                return f"{qualified}()"
        if isinstance(func, ast.Attribute) and func.attr in _LOG_METHODS and isinstance(func.value, ast.Name):
            base = func.value.id
            if base in ctx.index.loggers and base not in facts.local_names and base not in facts.closure:
                return f"logging call {base}.{func.attr}()"
        return None


class IoInTracedCode(Rule):
    """File, OS, network or subprocess I/O inside traced code.

    ## What it does
    Flags `open()`, `input()`, `os.*` and `os.path` file checks, `shutil`, `subprocess`,
    `socket`, `requests`, `pickle`/`json` load and dump, `np.save`/`np.load` and
    `pathlib.Path` reads and writes inside a traced function.

    ## Why is this bad?
    I/O happens once, at trace time. A file read is baked into the compiled
    computation as a constant; a write happens on the first call only.

    ## Example
    ```python
    @jax.jit
    def step(x):
        with open("log.txt", "a") as f:
            f.write("step\\n")
        return x + 1
    ```

    ## Use instead
    ```python
    def host_log(x):
        with open("log.txt", "a") as f:
            f.write(f"{x}\\n")

    @jax.jit
    def step(x):
        jax.debug.callback(host_log, x)
        return x + 1
    ```
    """

    code = "JS102"
    name = "io-in-traced-code"
    severity = "error"
    summary = "file, OS, network or subprocess I/O inside traced code happens only at trace time"
    bad = (
        "import jax\n@jax.jit\ndef f(x):\n    with open('log.txt', 'a') as fh:\n        fh.write('x')\n    return x\n",
        "import jax, numpy as np\n@jax.jit\ndef f(x):\n    w = np.load('w.npy')\n    return x * w\n",
        "import os, jax\n@jax.jit\ndef f(x):\n    if os.path.exists('flag'):\n        return x\n    return -x\n",
        "import subprocess, jax\n@jax.vmap\ndef f(x):\n    subprocess.run(['true'])\n    return x\n",
    )
    good = (
        "import os, jax\nW = os.path.join('a', 'b')\n@jax.jit\ndef f(x):\n    name = os.path.join('a', 'b')\n    return x\n",
        "def load(path):\n    with open(path) as fh:\n        return fh.read()\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts, call in calls_in_traced_code(ctx):
            what = self._what(ctx, facts, call)
            if what:
                yield ctx.finding(
                    self,
                    call,
                    f"{what} in `{facts.qualname}` runs only once, while JAX traces it" + traced_because(facts),
                    facts.qualname,
                    "do the I/O outside the jitted function, or in jax.debug.callback / jax.experimental.io_callback",
                )

    @staticmethod
    def _what(ctx: ModuleContext, facts: FunctionFacts, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name) and func.id in ("open", "input") and is_builtin(ctx, facts, func.id):
            return f"{func.id}()"
        if isinstance(func, ast.Attribute) and func.attr in _PATH_IO_METHODS and isinstance(func.value, ast.Call):
            maker = qualify(ctx, facts, func.value.func)
            if maker in ("pathlib.Path", "pathlib.PurePath"):
                return f"Path.{func.attr}()"
        qualified = qualify(ctx, facts, func)
        if not qualified:
            return None
        if qualified in _IO_EXACT or qualified.startswith(_IO_PREFIXES):
            return f"{qualified}()"
        parts = qualified.split(".")
        if parts[0] == "os" and len(parts) >= 2:
            if parts[1] == "path":
                return f"{qualified}()" if len(parts) == 3 and parts[2] in _OS_PATH_IO else None
            if parts[1] not in _OS_PURE:
                return f"{qualified}()"
        return None


class GlobalWriteInTracedCode(Rule):
    """Write to a global, a nonlocal or a module attribute inside traced code.

    ## What it does
    Flags assignments to names declared `global` or `nonlocal`, and assignments to
    attributes of imported modules, inside a traced function.

    ## Why is this bad?
    The write happens once, while tracing. Calls that hit the compilation cache do not
    update the variable, so counters, flags and caches silently stop changing.

    ## Example
    ```python
    calls = 0

    @jax.jit
    def step(x):
        global calls
        calls += 1
        return x + 1
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(x, calls):
        return x + 1, calls + 1
    ```
    """

    code = "JS103"
    name = "global-write-in-traced-code"
    severity = "error"
    summary = "writes to global/nonlocal names or module attributes inside traced code happen only at trace time"
    bad = (
        "import jax\ncalls = 0\n@jax.jit\ndef f(x):\n    global calls\n    calls += 1\n    return x\n",
        "import jax\nimport config\n@jax.jit\ndef f(x):\n    config.seen = True\n    return x\n",
        "from jax import lax\ndef run(xs):\n    n = 0\n    def body(c, x):\n        nonlocal n\n        n = 1\n        return c, x\n    return lax.scan(body, 0, xs)\n",
    )
    good = (
        "import jax\ncalls = 0\ndef count():\n    global calls\n    calls += 1\n",
        "import jax\n@jax.jit\ndef f(x):\n    total = 0\n    total += 1\n    return x + total\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            declared = facts.globals_declared | facts.nonlocals_declared
            for node, _ in ctx.body(facts):
                targets: list[ast.expr] = []
                value: ast.expr | None = None
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets, value = [node.target], node.value
                if value is not None and facts.is_traced(value):
                    continue  # JS107 reports traced values that escape
                for target in targets:
                    if isinstance(target, ast.Name) and target.id in declared:
                        kind = "global" if target.id in facts.globals_declared else "nonlocal"
                        yield ctx.finding(
                            self,
                            target,
                            f"`{facts.qualname}` writes {kind} `{target.id}`; the write happens only while tracing"
                            + traced_because(facts),
                            facts.qualname,
                            "return the new value from the function instead of writing shared state",
                        )
                    elif isinstance(target, ast.Attribute) and origin(ctx, facts, target.value) == "module":
                        yield ctx.finding(
                            self,
                            target,
                            f"`{facts.qualname}` sets module attribute `{ast.unparse(target)}`; this happens only "
                            "while tracing" + traced_because(facts),
                            facts.qualname,
                            "set configuration before calling the jitted function",
                        )


class MutationInTracedCode(Rule):
    """Mutation of an argument, closed-over or global container inside traced code.

    ## What it does
    Flags `append`/`extend`/`update`/`pop`/... calls and item or attribute
    assignments on objects that were not created inside the traced function:
    its arguments, `self`, closed-over variables and module globals.

    ## Why is this bad?
    The mutation happens once, at trace time, and cached calls skip it. Under `jit`
    the arguments are rebuilt from their leaves, so changes to them are lost anyway.

    ## Example
    ```python
    history = []

    @jax.jit
    def step(state, lr):
        history.append(lr)
        state["step"] = state["step"] + 1
        return state
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(state, lr):
        return {**state, "step": state["step"] + 1}
    ```
    """

    code = "JS104"
    name = "mutation-in-traced-code"
    severity = "warning"
    summary = "mutating arguments, closed-over or global containers inside traced code happens only at trace time"
    bad = (
        "import jax\nseen = []\n@jax.jit\ndef f(x):\n    seen.append(1)\n    return x\n",
        "import jax\n@jax.jit\ndef f(state):\n    state['step'] = 0\n    return state\n",
        "import jax\nfrom functools import partial\n@partial(jax.jit, static_argnums=1)\ndef f(x, opts):\n    opts.update(a=1)\n    return x\n",
    )
    good = (
        "import jax\n@jax.jit\ndef f(x):\n    out = []\n    out.append(x)\n    d = {}\n    d['a'] = x\n    return out, d\n",
        "import jax, optax\ntx = optax.adam(1e-3)\n@jax.jit\ndef f(g, s):\n    updates, s = tx.update(g, s)\n    return updates, s\n",
        "import jax\n@jax.jit\ndef f(x, **kw):\n    kw.pop('a', None)\n    return x\n",
    )

    def check(self, ctx: ModuleContext) -> Iterator[Finding]:
        for facts in ctx.functions:
            for node, parent in ctx.body(facts):
                target: ast.expr | None = None
                value: ast.expr | None = None
                verb = ""
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(parent, ast.Expr):
                    if node.func.attr in MUTATORS:
                        target, verb = node.func.value, f".{node.func.attr}()"
                        args = [*node.args, *(k.value for k in node.keywords)]
                        if any(facts.is_traced(a) for a in args):
                            value = args[0]
                elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                    for t in targets:
                        if isinstance(t, (ast.Subscript, ast.Attribute)):
                            target, verb = t.value, "item assignment" if isinstance(t, ast.Subscript) else "attribute assignment"
                            value = getattr(node, "value", None)
                            if isinstance(t, ast.Subscript) and is_array_update(facts, t):
                                target = None
                            break
                if target is None:
                    continue
                where = origin(ctx, facts, target)
                traced_value = value is not None and facts.is_traced(value)
                if where in ("self", "global", "closure") and traced_value:
                    continue  # JS107: a traced value escapes
                if where in ("self", "param", "global", "closure", "alias"):
                    yield ctx.finding(
                        self,
                        node,
                        f"`{facts.qualname}` mutates `{ast.unparse(target)}` ({_ORIGIN_TEXT[where]}) with {verb}; "
                        "this happens only while tracing" + traced_because(facts),
                        facts.qualname,
                        "build and return a new value instead of mutating shared state",
                    )


_ORIGIN_TEXT = {
    "self": "an attribute of self",
    "param": "an argument",
    "global": "a module global",
    "closure": "a closed-over variable",
    "alias": "an object from outside the function",
}


def is_array_update(facts: FunctionFacts, target: ast.Subscript) -> bool:
    """Item assignment that JS204 reports (on a JAX array) rather than JS104."""
    flags = facts.flags_of(target.value)
    if not flags & ARRAY or flags & CONTAINER:
        return False
    index = target.slice
    return not (isinstance(index, ast.Constant) and isinstance(index.value, str))
