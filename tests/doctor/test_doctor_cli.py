"""``jitscope doctor PROGRAM.py`` on programs with one planted problem each (tests/targets/doctor/): the first
finding names that problem and its line; two problems rank by what they cost; a clean program says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TARGETS = Path(__file__).resolve().parents[1] / "targets" / "doctor"


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "jitscope", "doctor", *args], capture_output=True, text=True,
                          env=env, cwd=TARGETS, timeout=300, check=False)


def findings(proc: subprocess.CompletedProcess[str], out: Path) -> list[dict]:
    assert out.is_file(), proc.stderr
    document = json.loads(out.read_text())
    assert document["kind"] == "jitscope.doctor" and document["schema_version"].startswith("1.")
    return document["findings"]


def test_a_static_learning_rate_is_found_at_its_jit_with_the_gate(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--fail-on", "waste>5%", "--out", str(out), "static_value.py")
    assert proc.returncode == 1, proc.stderr  # the gate: the recompiles are well over 5% of the run
    first = findings(proc, out)[0]
    assert first["kind"] == "recompile-static-value" and first["location"]["line"] == 9
    assert first["count"] == 7 and 0 < first["gain_s"] <= first["cost_s"]
    # tried: step jitted again with lr traced compiles once for the run's 8 calls, so all 7 recompiles go
    assert first["gain"] == "measured" and "makes 1 compile where the run made 8" in first["gain_note"]
    assert first["gain_s"] == first["cost_s"]
    assert "1. `step` compiled again 7 times, once per new value of lr (static)" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: jitscope doctor: avoidable")
    assert proc.stdout.strip().replace(".", "").replace("-", "").isdigit()  # the program's own stdout, untouched


def test_a_static_argument_that_picks_a_code_path_is_tried_and_kept_static(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "static_branch.py")
    assert proc.returncode == 0, proc.stderr
    first = findings(proc, out)[0]
    assert first["kind"] == "recompile-static-value" and first["gain"] == "none" and first["gain_s"] == 0
    assert first["change"].startswith("keep depth static (tried traced, it fails: TracerIntegerConversionError")


@pytest.mark.parametrize(("program", "kind", "line", "tried"), [
    # one jit built outside the loop compiles once for the run's 8 calls
    ("jit_in_loop.py", "jit-in-loop", 9, ("jitted once, outside the loop, and compiled for the run's 8 calls makes "
                                         "1 compile where the run made 8")),
    # batches of 3..12 rows padded to 4, 8 and 16 rows: 3 programs for the run's 10 shapes
    ("ragged.py", "recompile-shape", 15, ("with batch padded to power-of-two lengths and compiled for the run's 10 "
                                         "calls makes 3 compiles where the run made 10"))])
def test_each_planted_problem_is_the_first_finding_at_its_line_with_its_change_tried(
        tmp_path: Path, program: str, kind: str, line: int, tried: str) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), program)
    assert proc.returncode == 0, proc.stderr
    first = findings(proc, out)[0]
    assert (first["kind"], first["location"]["line"]) == (kind, line)
    assert first["gain"] == "measured" and tried in first["gain_note"] and 0 < first["gain_s"] <= first["cost_s"]


def test_two_problems_rank_by_cost_and_a_trace_time_print_comes_after(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--format", "json", "--out", str(out), "two_problems.py")
    assert proc.returncode == 0, proc.stderr
    found = findings(proc, out)
    assert [f["kind"] for f in found] == ["recompile-static-value", "jit-in-loop", "trace-effect"]
    assert found[0]["cost_s"] > found[1]["cost_s"] and found[2]["location"]["line"] == 24


def test_a_clean_program_and_a_failing_one() -> None:
    clean = doctor("clean.py")
    assert clean.returncode == 0 and "nothing to fix above the noise floor" in clean.stderr
    failed = doctor("fails.py")
    assert failed.returncode == 1  # the program's own exit code, as python gives it
    assert "RuntimeError: the data ran out" in failed.stderr and "up to the failure" in failed.stderr
    assert "`f` compiled again 5 times for 6 shapes of x" in failed.stderr


def test_bad_input_is_one_line_and_runs_nothing() -> None:
    for args, what in ((("missing.py",), "missing.py"), (("--fail-on", "slow>1", "clean.py"), "--fail-on"),
                       (("--format", "html", "clean.py"), "--format html writes a file")):
        proc = doctor(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and what in lines[0], proc.stderr


def test_the_python_api_gives_the_same_findings() -> None:
    code = ("import jitscope; r = jitscope.doctor('jit_in_loop.py'); f = r.findings[0]; "
            "print(f.kind, f.location.line, r.to_dict()['kind'], 'change:' in r.render('text'))")
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=TARGETS,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "jit-in-loop 9 jitscope.doctor True"


def test_a_real_equinox_program_has_its_static_learning_rate_and_not_its_models_init(tmp_path: Path) -> None:
    """eqx.nn.MLP(...) compiles a dozen operations outside jit once, at start-up: not work in a loop. The
    filter_jit step's Python-float lr_scale is the problem (filter_jit keeps it static)."""
    pytest.importorskip("equinox")
    pytest.importorskip("optax")
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "eqx_train.py")
    assert proc.returncode == 0, proc.stderr
    found = findings(proc, out)
    assert [(f["kind"], f["location"]["line"]) for f in found] == [("recompile-static-value", 7)]
    assert "pass lr_scale as an array" in found[0]["change"] and found[0]["count"] == 5


def test_a_loss_read_back_every_step_is_a_host_sync_at_its_line(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "sync.py")
    assert proc.returncode == 0, proc.stderr
    first = findings(proc, out)[0]
    assert (first["kind"], first["location"]["line"], first["count"]) == ("host-sync", 21, 100)
    # on the CPU backend the device is the host's own cores: listed, its gain not estimated
    assert first["gain"] == "none" and first["gain_s"] == 0 and "not estimated on the CPU backend" in first["gain_note"]
    assert "jax.device_get" in first["change"]
    # the one read after the loop (line 22) is a value read once, not a sync per step
    assert all(f["location"]["line"] != 22 for f in findings(proc, out))


def test_lint_hazards_the_run_hit_are_evidence_or_findings_of_their_own(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "lint_hits.py")
    assert proc.returncode == 0, proc.stderr
    found = findings(proc, out)
    assert [(f["kind"], f["location"]["line"]) for f in found] == [("recompile-static-value", 18), ("lint", 15)]
    # JS302 explains the recompiles (its line is the loop's call): lint would have caught it before the run
    assert any(e.startswith("lint JS302 (many-static-values) flags it before any run") for e in found[0]["evidence"])
    # JS307 is a hazard of its own in code the run compiled: untimed, after the timed finding
    assert found[1]["title"].startswith("JS307 captured-constant: `lookup` uses `TABLE`, a 4 MiB array")
    assert found[1]["gain"] == "none" and found[1]["cost_s"] == 0


def test_a_slow_first_compile_is_opened_at_the_unrolled_loops_line(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "unrolled.py")
    assert proc.returncode == 0, proc.stderr
    first = findings(proc, out)[0]
    assert (first["kind"], first["location"]["line"]) == ("slow-compile", 10)
    assert "a loop unrolled 600 times makes 100% of the program" in first["title"]
    assert "lax.scan" in first["change"] and first["gain"] == "estimated" and 0 < first["gain_s"] <= first["cost_s"]


def test_an_nnx_static_argument_is_estimated_not_misjudged_by_a_plain_rejit(tmp_path: Path) -> None:
    pytest.importorskip("flax.nnx")
    pytest.importorskip("optax")
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "nnx_static.py")
    assert proc.returncode == 0, proc.stderr
    first = findings(proc, out)[0]
    assert first["kind"] == "recompile-static-value" and first["count"] == 7
    assert first["gain"] == "estimated" and first["change"].startswith("let JAX trace lr")


def test_the_costliest_functions_hottest_device_line_is_ranked_apart(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "sync.py")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(out.read_text())
    (hot,) = document["device"]
    assert (hot["kind"], hot["location"]["line"], hot["function"]) == ("hot-line", 11, "step")
    assert hot["per_call_s"] > 0 and hot["cost_s"] == 0 and "of `step`'s device time is this line" in hot["title"]
    assert "jitscope profile sync.py:step --from-run" in hot["change"]
    assert "D1. " in proc.stderr and "device time" in proc.stderr
