"""The user's code exits, crashes or tampers with the process: the user's failure, in one line (issue 25)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1] / "targets" / "faults"


def jitscope(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "jitscope", *args], capture_output=True, text=True, env=env,
                          cwd=HERE, timeout=120, check=False)


def line_of(marker: str, file: str = "faults.py") -> int:
    return next(i for i, text in enumerate((HERE / file).read_text().splitlines(), 1) if marker in text)


@pytest.mark.parametrize("command", ["trace", "bench", "profile"])
def test_sys_exit_in_the_users_function_fails_the_call_and_the_json_report_is_still_written(command: str) -> None:
    extra = ("--budget", "0.05") if command != "trace" else ("--stages", "jaxpr")
    proc = jitscope(command, "faults.py:exits", "-s", "f32[4]", "-f", "json", *extra)
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "the code called sys.exit(7)" in errors[0]
    report = json.loads(proc.stdout)  # still a whole document, the failure recorded in it
    assert "sys.exit(7)" in json.dumps(report)
    assert f"faults.py\", line {line_of('EXIT-LINE')}" in proc.stderr or command == "trace"


def test_sys_exit_while_the_module_imports_is_the_users_failure() -> None:
    proc = jitscope("trace", "exit_at_import.py:f", "-s", "f32[4]")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: importing exit_at_import.py raised SystemExit: 3")
    assert 'exit_at_import.py", line 3' in proc.stderr


def test_os_exit_says_where_it_was_called_before_the_process_ends() -> None:
    proc = jitscope("trace", "faults.py:hard_exit", "-s", "f32[4]")
    assert proc.returncode == 5
    assert f"error: os._exit(5) called at {HERE / 'faults.py'}:{line_of('HARD-EXIT-LINE')} in hard_exit" in proc.stderr


def test_a_crash_in_a_c_extension_names_the_signal_and_the_users_frame() -> None:
    proc = jitscope("trace", "faults.py:segfault", "-s", "f32[4]")
    assert proc.returncode < 0 or proc.returncode > 128
    assert "Fatal Python error: Segmentation fault" in proc.stderr
    assert f'faults.py", line {line_of("SEGFAULT-LINE")} in segfault' in proc.stderr


def test_closing_stdout_while_traced_loses_nothing() -> None:
    proc = jitscope("trace", "faults.py:closes_stdout", "-s", "f32[4]", "--stages", "jaxpr")
    assert proc.returncode == 0, proc.stderr
    assert "faults.py:closes_stdout" in proc.stdout


@pytest.mark.parametrize(("function", "what"), [
    ("closes_fd1", "closed file descriptor 1"),
    ("clears_path", "removed entries from sys.path"),
    ("replaces_jit", "replaced jax.jit"),
])
def test_tampering_with_jitscopes_process_is_put_back_and_reported(function: str, what: str) -> None:
    proc = jitscope("bench", f"faults.py:{function}", "-s", "f32[4]", "--budget", "0.05")
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    expected = (f"error: your code {what} while jitscope ran it (jitscope put it back; code that is traced "
                "or timed should leave the process as it found it)")
    assert errors == [expected]
    assert "internal error" not in proc.stderr


def test_run_writes_its_report_when_the_program_empties_sys_path(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = jitscope("run", "--out", str(out), "clears_path_program.py")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["kind"] == "jitscope.run"
