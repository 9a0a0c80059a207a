from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


#: Variables that change how output looks (colour, width, terminal) or where JAX runs; run_cli
#: removes them so tests see the same plain 100-column output in every environment.
STYLE_ENV = ("FORCE_COLOR", "PY_COLORS", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "TERM", "COLORTERM",
             "TERMINAL_WIDTH", "COLUMNS", "LINES", "JUPYTER_COLUMNS", "JUPYTER_LINES", "GITHUB_ACTIONS",
             "JITSCOPE_DEBUG")


def run_cli(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, unset: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m jitscope ARGS`` in a subprocess, as a user would, without colour.

    ``env`` adds variables; ``unset`` removes more (e.g. COLUMNS, which is set to 100 by default).
    """
    full_env = {k: v for k, v in os.environ.items() if k not in STYLE_ENV}
    full_env.update({"NO_COLOR": "1", "COLUMNS": "100", **(env or {})})
    for name in unset:
        full_env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "jitscope", *args], cwd=cwd, env=full_env, capture_output=True, text=True, check=False,
        timeout=300,
    )


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process consoles (rich reads FORCE_COLOR, NO_COLOR, COLUMNS, TTY_COMPATIBLE...) see no styling variables.

    Tests that want colour or a width say so on the Console they build.
    """
    for name in (*STYLE_ENV, "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def cli():
    return run_cli
