"""``jitscope run`` when the program forks, closes stderr or is sent SIGTERM (issue 30): one report, the
program's exit code as python gives it, the report written by the process jitscope started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1] / "targets" / "faults"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=HERE, timeout=120,
                          check=False)


def test_a_forked_child_writes_no_report_and_no_summary(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    proc = run("-m", "jitscope", "run", "--out", str(out), "fork_program.py")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert (report["exit_code"], report["outcome"]) == (0, "exited 0")
    assert len([e for e in report["events"] if e["kind"] == "jit"]) == 3
    assert proc.stderr.count("jitscope run: fork_program.py exited") == 1  # the child printed no summary


@pytest.mark.parametrize("how", ["object", "fd"])
def test_a_program_that_closes_stderr_gets_its_report_and_its_exit_code(how: str, tmp_path: Path) -> None:
    python = run("closes_stderr_program.py", how)
    out = tmp_path / "run.json"
    proc = run("-m", "jitscope", "run", "--out", str(out), "closes_stderr_program.py", how)
    assert proc.returncode == python.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    report = json.loads(out.read_text())
    assert report["exit_code"] == 0 and len([e for e in report["events"] if e["kind"] == "jit"]) == 1


def test_sigterm_ends_the_program_with_143_and_the_report_is_written(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    proc = run("-m", "jitscope", "run", "--out", str(out), "sigterm_program.py")
    assert proc.returncode == 143, proc.stderr
    report = json.loads(out.read_text())
    assert (report["exit_code"], report["outcome"]) == (143, "terminated by SIGTERM")
    assert len([e for e in report["events"] if e["kind"] == "jit"]) == 1


def test_sigterm_still_ends_a_program_stuck_outside_python() -> None:
    """The handler that keeps the report cannot run while the main thread waits in XLA (a hung collective): a
    launcher's SIGTERM still ends the process, a moment later, saying so."""
    proc = run("-m", "jitscope", "run", "sigterm_stuck_program.py")
    assert proc.returncode == 143, proc.stderr
    assert "the program did not stop within 2 s of SIGTERM (it is stuck outside Python)" in proc.stderr


def test_sigterm_the_program_handles_or_sends_its_children_is_left_to_it() -> None:
    """A forked child that SIGTERM kills dies by it as under python, and a handler the program installs gets
    the signal: jitscope neither turns the child's death into an exit nor ends the program itself."""
    python = run("sigterm_handled_program.py")
    proc = run("-m", "jitscope", "run", "sigterm_handled_program.py")
    assert proc.stdout == python.stdout == "child killed by SIGTERM\nhandled [15]\n", proc.stderr
    assert proc.returncode == python.returncode == 3


@pytest.mark.parametrize(("function", "stream"), [("closes_stderr", "sys.stderr"), ("closes_stdout", "sys.stdout")])
def test_json_output_names_the_stream_the_code_closed(function: str, stream: str) -> None:
    """With --format json the user's stdout goes to stderr; closing one of them still names that one."""
    proc = run("-m", "jitscope", "memory", f"faults.py:{function}", "-s", "f32[4]", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: your code closed {stream} while jitscope ran it (jitscope put it back; code that "
                      "is traced or timed should leave the process as it found it)"]


def test_a_child_forked_while_tracing_ends_there_without_a_second_report() -> None:
    proc = run("-m", "jitscope", "trace", "faults.py:forks", "-s", "f32[4]", "--stages", "jaxpr")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("call: forks(f32[4])") == 1
