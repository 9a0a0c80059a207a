"""JS102 `io-in-traced-code`: docs, examples, static check and `jitscope lint --trace` check."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jitscope.linter.context import (
    ModuleContext,
    TracedFunction,
)
from jitscope.linter.rule import TracedCodeRule
from jitscope.model.effect_catalogue import linted_methods
from jitscope.model.effects import EffectKind
from jitscope.model.lint import Finding

_PATH_IO_METHODS = linted_methods("pathlib", "Path")


class IoInTracedCode(TracedCodeRule):
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
    effect_kinds = frozenset({EffectKind.FILE_IO, EffectKind.OS, EffectKind.NETWORK, EffectKind.SUBPROCESS})
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

    def _check(self, ctx: ModuleContext) -> Iterator[Finding]:
        return self.call_findings(
            ctx, lambda facts, call: self._what(ctx, facts, call), "runs only once, while JAX traces it",
            "do the I/O outside the jitted function, or in jax.debug.callback / jax.experimental.io_callback")

    def _what(self, ctx: ModuleContext, facts: TracedFunction, call: ast.Call) -> str | None:
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _PATH_IO_METHODS
            and isinstance(func.value, ast.Call)
        ):
            maker = ctx.qualified_name(func.value.func, facts)
            if maker in ("pathlib.Path", "pathlib.PurePath"):
                return f"Path.{func.attr}()"
        return self.catalogued_call(ctx, facts, func)
