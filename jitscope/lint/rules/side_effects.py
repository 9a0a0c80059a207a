"""JS101-JS107: side effects inside traced code.

Python side effects run once, while JAX traces the function; the compiled
computation that runs on later calls contains none of them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.lint.analysis.qualified_names import words
from jitscope.lint.analysis.taint import FunctionFacts
from jitscope.lint.rule import ModuleContext, Rule
from jitscope.lint.rules.common import is_builtin, qualify, traced_because
from jitscope.model.lint import Finding

_LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
)
_PRINTERS = frozenset({"pprint.pprint", "pprint.pp", "rich.print", "builtins.print", "tqdm.tqdm.write"})
_STREAM_METHODS = frozenset({"write", "writelines", "flush"})
_IO_PREFIXES = (
    "subprocess.",
    "shutil.",
    "socket.",
    "urllib.request.",
    "requests.",
    "httpx.",
    "http.client.",
    "ftplib.",
    "smtplib.",
    "tempfile.",
    "glob.",
    "sqlite3.",
    "aiohttp.",
)
_IO_EXACT = words(
    "io.open pickle.load pickle.dump json.load json.dump numpy.save numpy.savez "
    "numpy.savez_compressed numpy.savetxt numpy.load numpy.loadtxt numpy.genfromtxt numpy.fromfile "
    "builtins.open webbrowser.open"
)
_OS_PATH_IO = words(
    "exists lexists isfile isdir islink ismount getsize getmtime getatime getctime realpath samefile"
)
_OS_PURE = words(
    "fspath fsencode fsdecode getenv cpu_count getpid getcwd get_terminal_size sep linesep name "
    "urandom getrandom environ PathLike strerror"
)
_PATH_IO_METHODS = words(
    "read_text write_text read_bytes write_bytes open mkdir unlink touch rmdir iterdir glob rglob "
    "exists is_file is_dir rename replace stat"
)


def calls_in_traced_code(ctx: ModuleContext) -> list[tuple[FunctionFacts, ast.Call]]:
    """Every call inside traced code (computed once per module; five rules look at calls)."""
    found: list[tuple[FunctionFacts, ast.Call]] | None = ctx.memo.get("calls")
    if found is None:
        found = [
            (facts, node)
            for facts in ctx.functions
            for node, _ in ctx.body(facts)
            if isinstance(node, ast.Call)
        ]
        ctx.memo["calls"] = found
    return found


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
                    'use jax.debug.print("{}", value) to print values at run time',
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
                    f"{what} in `{facts.qualname}` runs only once, while JAX traces it"
                    + traced_because(facts),
                    facts.qualname,
                    "do the I/O outside the jitted function, or in jax.debug.callback / jax.experimental.io_callback",
                )

    @staticmethod
    def _what(ctx: ModuleContext, facts: FunctionFacts, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name) and func.id in ("open", "input") and is_builtin(ctx, facts, func.id):
            return f"{func.id}()"
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _PATH_IO_METHODS
            and isinstance(func.value, ast.Call)
        ):
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
