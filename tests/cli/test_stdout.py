"""user_output_to_stderr: Python-level and C-level writes go to stderr; machine-readable reports own stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH_PROJECT = Path(__file__).resolve().parents[1] / "targets" / "bench_project"

SCRIPT = """
import ctypes, os, sys
from jitscope.stdout import user_output_to_stderr
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


def _env() -> dict[str, str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    env.pop("FORCE_COLOR", None)
    return env


def jitscope(*args: str, cwd: Path = BENCH_PROJECT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jitscope", *args], check=False, cwd=cwd, env=_env(),
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


# The user's code writes to stdout after the command's own work: an atexit handler, a thread that outlives the
# call, a child process, a raw fd 1 write (issue 30). stdout stays one JSON document; all of that is on stderr.
NOISY = """
import atexit, os, threading, time
import jax.numpy as jnp

atexit.register(lambda: print("atexit print"))


def _late():
    time.sleep(0.3)
    print("thread print", flush=True)


threading.Thread(target=_late).start()  # not a daemon: Python waits for it after the command


def f(x):
    os.write(1, b"fd write\\n")
    os.system("echo from os.system")
    return jnp.sin(x) * 2


if __name__ == "__main__":
    f(jnp.ones(4))
"""

NOISY_LINES = ("atexit print", "thread print", "fd write", "from os.system")


@pytest.mark.parametrize("command", [
    ["trace", "noisy.py:f", "-s", "f32[4]", "--stages", "jaxpr"],
    ["bench", "noisy.py:f", "-s", "f32[4]", "--budget", "0.01", "--min-rounds", "2", "--no-dispatch"],
    ["memory", "noisy.py:f", "-s", "f32[4]"],
    ["trace", "noisy.py:f", "--from-run", "--stages", "jaxpr"],
], ids=["trace", "bench", "memory", "trace-from-run"])
def test_json_stdout_is_one_document_whatever_the_program_writes_later(tmp_path, command):
    (tmp_path / "noisy.py").write_text(NOISY)
    proc = jitscope(*command, "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["traces" if command[0] == "trace" else "rows"]
    # --from-run stops the program at the call: a thread it left running (and so its atexit handler) may never
    # get to print (cli.app.main ends the process at once then)
    for line in NOISY_LINES if "--from-run" not in command else ("fd write", "from os.system"):
        assert line in proc.stderr


@pytest.mark.parametrize("closed", ["1", "2"])
def test_a_stream_closed_at_start_is_no_crash(tmp_path, closed):
    """``>&-`` or ``2>&-``: what went to the closed stream is dropped (as Python's print drops it), the rest is
    written, and the exit code is the command's."""
    (tmp_path / "noisy.py").write_text(NOISY)
    line = f"{sys.executable} -m jitscope trace noisy.py:f -s f32[4] --stages jaxpr --format json {closed}>&-"
    proc = subprocess.run(["sh", "-c", line], check=False, cwd=tmp_path, env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    if closed == "1":
        assert proc.stdout == "" and "atexit print" in proc.stderr and "I/O error" not in proc.stderr
        assert "internal error" not in proc.stderr
    else:
        assert json.loads(proc.stdout)["kind"] == "jitscope.trace" and proc.stderr == ""
