"""``jitscope diff TARGET --base-env PYTHON``: the old side traced by another interpreter.

The comparison across two JAX versions runs where a second environment is named by
``JITSCOPE_TEST_BASE_PYTHON`` (CI builds several: e.g. the JAX 0.4.38 one); without it, only the
one-line errors are checked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli


def test_an_interpreter_that_is_missing_or_cannot_run_jitscope_is_one_line() -> None:
    result = run_cli("diff", "diff_old.py:predict", "--base-env", "/nonexistent/bin/python", cwd=EXAMPLES)
    assert result.returncode == 2
    expected = ("error: old (/nonexistent/bin/python): no Python at /nonexistent/bin/python (--base-env takes a "
                "python executable, e.g. ../old-venv/bin/python)")
    assert result.stderr.strip().splitlines() == [expected]


def test_the_same_interpreter_as_base_env_is_no_change() -> None:
    result = run_cli("diff", "diff_old.py:predict", "--base-env", sys.executable, "-f", "json", cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    (call,) = json.loads(result.stdout)["calls"]
    assert call["changes"] == [] and call["hlo"] == [] and call["old"]["label"] == sys.executable


@pytest.mark.skipif(not os.environ.get("JITSCOPE_TEST_BASE_PYTHON"), reason="JITSCOPE_TEST_BASE_PYTHON names no "
                    "second environment")
def test_another_jax_on_the_old_side() -> None:
    other = os.environ["JITSCOPE_TEST_BASE_PYTHON"]
    result = run_cli("diff", "diff_old.py:predict", "--base-env", other, "-f", "json", cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    (call,) = doc["calls"]
    old_jax, new_jax = call["old"]["environment"]["jax"], call["new"]["environment"]["jax"]
    assert call["changes"] == []  # the same code: the jaxprs compute the same on both sides
    if old_jax != new_jax:
        assert f"jax: {old_jax} on the old side, {new_jax} on the new" in doc["notes"]


# An interpreter that hangs (issue 30): diff stops it after --timeout, with what it started, and says so; Ctrl-C
# and SIGTERM end it and its children too (each side runs in a process group of its own: children.py).
HANGING = """#!/bin/sh
sleep 300 &
echo $! > "{pidfile}"
sleep 300
"""


def _hanging_python(tmp_path: Path) -> tuple[Path, Path]:
    pidfile = tmp_path / "grandchild.pid"
    script = tmp_path / "hanging-python"
    script.write_text(HANGING.format(pidfile=pidfile))
    script.chmod(0o755)
    return script, pidfile


def _gone(pid: int) -> bool:
    """The process ended (killed; a zombie counts as ended) within a few seconds."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc").is_dir() or sys.platform == "win32", reason="reads /proc; POSIX sessions")
def test_an_interpreter_that_hangs_is_stopped_after_the_timeout_with_what_it_started(tmp_path: Path) -> None:
    python, pidfile = _hanging_python(tmp_path)
    result = run_cli("diff", "diff_old.py:predict", "--base-env", str(python), "--timeout", "1", cwd=EXAMPLES)
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: old ({python}): {python} running jitscope trace diff_old.py:predict did not "
                           "finish within 1 s, and was stopped")
    assert "--timeout SECONDS" in line
    assert _gone(int(pidfile.read_text()))


@pytest.mark.skipif(not Path("/proc").is_dir() or sys.platform == "win32", reason="reads /proc; POSIX sessions")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_and_sigterm_end_the_side_and_what_it_started(tmp_path: Path, sig: signal.Signals) -> None:
    python, pidfile = _hanging_python(tmp_path)
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "jitscope", "diff", "diff_old.py:predict", "--base-env",
                             str(python)], cwd=EXAMPLES, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (pidfile.is_file() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        grandchild = int(pidfile.read_text())
        proc.send_signal(sig)  # to jitscope alone, as kill does (a terminal's Ctrl-C no longer reaches the side)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGTERM), stderr
    assert _gone(grandchild)


def test_a_negative_timeout_is_one_line() -> None:
    result = run_cli("diff", "diff_old.py:predict", "--base-env", sys.executable, "--timeout", "-1", cwd=EXAMPLES)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --timeout -1 is out of range (give seconds, 0 and at most 3600)"]
