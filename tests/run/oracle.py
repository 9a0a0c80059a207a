"""Run a program under ``jitscope run`` and read JAX's own record of the same run beside jitscope's.

JAX's record is its compile log (``JAX_LOG_COMPILES=1``): one ``Finished XLA compilation of NAME``
line per backend compile, and one ``Compiling NAME with global shapes and types [...]`` line per
lowering, both named as JAX names the computation (``jit(step)``, ``jvp(step)``). jitscope's record is
its JSON log. The two come from the same process, so they describe the same compiles.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jitscope.run.observer import jax_name

_COMPILED = re.compile(r"Finished XLA compilation of (.+?) in [0-9.e+-]+ sec")
_LOWERED = re.compile(r"Compiling (\S+) with global shapes and types (.*?)\. Argument mapping")


@dataclass
class OracleRun:
    returncode: int
    stderr: str
    report: dict[str, Any]
    jax_compiles: Counter[str]  # JAX's name (jit(...) removed) -> backend compiles in JAX's log
    jax_lowerings: Counter[str]
    #: JAX's name -> the argument types it logged for each lowering ("Compiling NAME with global shapes and
    #: types [...]"), in order
    jax_lowering_types: dict[str, list[str]]

    @property
    def events(self) -> list[dict[str, Any]]:
        return list(self.report["events"])

    def jitscope_compiles(self) -> Counter[str]:
        """jitscope's compiles by the name JAX gives them."""
        return Counter(e["jax_name"] for e in self.events if e["compiled"])

    def user_functions(self) -> dict[str, dict[str, Any]]:
        return {f["function"]: f for f in self.report["functions"] if f["kind"] not in ("jax-internal",)}


def run_with_oracle(program: Path, tmp: Path, *args: str, platforms: str | None = "cpu") -> OracleRun:
    """``platforms``: ``JAX_PLATFORMS`` for the program (None: whatever JAX picks, a GPU where there is one)."""
    out = tmp / f"{program.stem}.json"
    env = {**os.environ, "JAX_LOG_COMPILES": "1"}
    if platforms is not None:
        env["JAX_PLATFORMS"] = platforms
    proc = subprocess.run(
        [sys.executable, "-m", "jitscope", "run", "--log", "none", "--no-effects", "--out", str(out),
         str(program), *args],
        capture_output=True, text=True, env=env, timeout=600, cwd=program.parent, check=False,
    )
    report = json.loads(out.read_text()) if out.exists() else {"events": [], "functions": []}
    compiled = Counter(str(jax_name(m.group(1))) for m in _COMPILED.finditer(proc.stderr))
    types: dict[str, list[str]] = {}
    for m in _LOWERED.finditer(proc.stderr):
        types.setdefault(str(jax_name(m.group(1))), []).append(m.group(2))
    lowered = Counter({name: len(found) for name, found in types.items()})
    return OracleRun(proc.returncode, proc.stderr, report, compiled, lowered, types)
