"""user_output_to_stderr: Python-level and C-level writes go to stderr; machine-readable reports own stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BENCH_PROJECT = Path(__file__).resolve().parents[1] / "targets" / "bench_project"

SCRIPT = """
import ctypes, os, sys
from jitscope.api.stdout import user_output_to_stderr
print("before")
with user_output_to_stderr():
    print("python-level")
    os.write(1, b"fd-level\\n")
    ctypes.CDLL(None).printf(b"c-stdio\\n")
with user_output_to_stderr(active=False):
    print("inactive")
print("after")
"""


def test_python_fd_and_c_writes_go_to_stderr():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["before", "inactive", "after"]
    assert proc.stderr.splitlines() == ["python-level", "fd-level", "c-stdio"]


def jitscope(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "jitscope", *args], check=False, cwd=BENCH_PROJECT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_bench_json_owns_stdout_when_the_function_prints():
    proc = jitscope("bench", "bench_targets.py:chatty", "--shapes", "f32[4]", "--budget", "0.01", "--min-rounds",
                    "2", "--no-dispatch", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rows"][0]["target"] == "bench_targets.py:chatty"
    assert "python print while tracing" in proc.stderr and "debug print at run time: 0" not in proc.stdout
    assert "debug print at run time" in proc.stderr


def test_trace_json_owns_stdout_when_the_function_prints():
    proc = jitscope("trace", "bench_targets.py:chatty", "--shapes", "f32[4]", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "jitscope.trace"


def test_lint_json_owns_stdout_when_a_traced_function_prints():
    proc = jitscope("lint", "bench_targets.py", "--trace", "bench_targets.py:chatty", "--shapes", "f32[4]",
                    "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads(proc.stdout)["kind"] == "jitscope.lint"


def test_trace_json_environment_is_typed():
    proc = jitscope("trace", "bench_targets.py:scale", "--format", "json", "--stages", "jaxpr")
    env = json.loads(proc.stdout)["environment"]
    assert isinstance(env["device_count"], int) and isinstance(env["x64"], bool)
