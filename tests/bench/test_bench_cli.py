"""``jitscope bench`` as a user runs it: in a subprocess, from the fixture project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1] / "targets" / "bench_project"
FAST = ["--budget", "0.02", "--min-rounds", "3"]


def jitscope(*args: str, cwd: Path = PROJECT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "jitscope", "bench", *args], check=False, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_help_does_not_import_jax():
    code = (
        "import sys\n"
        "from jitscope.cli.app import main\n"
        "try:\n    main(['bench', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('JAX_IMPORTED' if 'jax' in sys.modules else 'NO_JAX')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "--fail-if-slower" in proc.stdout and "--cold-runs" in proc.stdout
    assert proc.stdout.strip().endswith("NO_JAX")


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path]:
    path = tmp_path_factory.mktemp("bench") / "base.json"
    return jitscope("bench_targets.py:scale", *FAST, "--format", "json", "--save", str(path)), path


def test_json_output_and_save(saved):
    proc, path = saved
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["kind"] == "jitscope.bench" and data["schema_version"] == "1.3"
    assert [r["call"] for r in data["rows"]] == ["f32[16]"]
    assert json.loads(path.read_text())["rows"][0]["call"] == "f32[16]"
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal


def doctor(path: Path, out: Path, factor: float) -> Path:
    """A copy of a saved report with cached medians and compile times multiplied by ``factor``."""
    data = json.loads(path.read_text())
    for row in data["rows"]:
        row["cached"]["blocked"]["median"] *= factor
        row["cold"]["median"]["compile"] *= factor
    out.write_text(json.dumps(data))
    return out


def test_compare_fails_on_regression(saved, tmp_path):
    _, path = saved
    faster_baseline = doctor(path, tmp_path / "fast.json", 0.01)
    proc = jitscope("bench_targets.py:scale", *FAST, "--compare", str(faster_baseline), "--fail-if-slower", "10%")
    assert proc.returncode == 1, proc.stderr
    assert "regression:" in proc.stderr and "2 metric(s)" in proc.stderr
    assert "compared with" in proc.stdout and "regression" in proc.stdout


def test_regression_line_shows_a_baseline_path_with_brackets(saved, tmp_path):
    _, path = saved
    baseline = doctor(path, tmp_path / "[main].json", 0.01)  # rich markup must not eat "[main]"
    proc = jitscope("bench_targets.py:scale", *FAST, "--compare", str(baseline), "--fail-if-slower", "10%")
    assert proc.returncode == 1, proc.stderr
    assert f"slower than {baseline}" in " ".join(proc.stderr.split())


def test_compare_passes_when_faster(saved, tmp_path):
    _, path = saved
    slower_baseline = doctor(path, tmp_path / "slow.json", 100.0)
    proc = jitscope("bench_targets.py:scale", *FAST, "--compare", str(slower_baseline), "--fail-if-slower", "10%",
                    "--format", "json")
    assert proc.returncode == 0, proc.stderr
    comparison = json.loads(proc.stdout)["comparison"]
    assert comparison["regressions"] == 0
    assert {e["status"] for e in comparison["entries"] if e["metric"] != "device memory"} == {"improvement"}
    # the program did not change: the memory XLA says it needs is the same
    assert {e["status"] for e in comparison["entries"] if e["metric"] == "device memory"} == {"same"}


def test_text_report_with_static_variants():
    proc = jitscope("bench_targets.py:power", "--shapes", "f32[8]", "--static", "n=1", "--static", "n=3", *FAST)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "first call (cold)" in out and "cached calls" in out and "environment: jax" in out
    assert "power(f32[8], n=1)" in out and "power(f32[8], n=3)" in out


def test_bad_usage_and_failing_target():
    proc = jitscope("bench_targets.py:scale", "--fail-if-slower", "10%")
    assert proc.returncode == 2 and "--fail-if-slower needs --compare" in proc.stderr
    proc = jitscope("bench_targets.py:fails_at_run", "--shapes", "f32[3]", *FAST)
    assert proc.returncode == 1
    assert "error: bench_targets.py:fails_at_run(f32[3]) failed on its first call" in proc.stderr
    assert "broken on purpose" in proc.stderr and "Traceback" not in proc.stdout


def test_failing_first_call_suggests_static_only_for_python_values():
    proc = jitscope("bench_targets.py:branches_on_setting", "--shapes", "f32[3], 0.5", *FAST)
    assert proc.returncode == 1
    error = " ".join(proc.stderr.split())
    assert "`x` is traced data: use jnp.where" in error
    assert "--static limit=0.5" in error and "--static x" not in error
    # one failing call: its error line is the summary, no "1 of 1 call(s) failed" repeat
    assert "call(s) failed" not in proc.stderr


def test_every_function_runs_when_one_fails():
    proc = jitscope("bench_targets.py:*", *FAST, "--format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [r["call"] for r in data["rows"]] == ["f32[16]", "f32[8], n=1", "f32[8], n=2"]
    assert [f["target"] for f in data["failures"]] == ["bench_targets.py:fails_at_run"]
    assert proc.stderr.splitlines()[-1] == "error: 1 of 4 call(s) failed: fails_at_run(f32[3])"


def test_device_out_of_memory_is_one_line_and_exit_2():
    proc = jitscope("bench_targets.py:device_oom", "--shapes", "f32[3]", *FAST)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error: the device ran out of memory (asked for 16 GiB)")
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in line and "XLA_PYTHON_CLIENT_MEM_FRACTION" in line
    assert "internal error" not in line
