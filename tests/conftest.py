from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run_cli(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m jitscope ARGS`` in a subprocess, as a user would, without colour."""
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", **(env or {})}
    full_env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "jitscope", *args], cwd=cwd, env=full_env, capture_output=True, text=True, check=False,
        timeout=300,
    )


@pytest.fixture
def cli():
    return run_cli
