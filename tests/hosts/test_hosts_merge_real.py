"""jitscope run in each of two real processes joined by jax.distributed (CPU, gloo), then jitscope merge."""

from __future__ import annotations

import json

import pytest

from jitscope.model.run import RUN_SCHEMA_VERSION
from tests.conftest import run_cli


def merged(folder) -> dict:
    result = run_cli("merge", str(folder), "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def rows_of(report: dict, function: str) -> list[dict]:
    return [c for c in report["compiles"] if c["function"] == function]


def test_every_process_writes_its_own_tagged_report(launched) -> None:
    out, results = launched("same")
    assert [r.returncode for r in results] == [0, 0], [r.stdout[-2000:] for r in results]
    assert sorted(p.name for p in out.glob("*.json")) == ["run.p0.json", "run.p1.json"]
    for index in (0, 1):
        data = json.loads((out / f"run.p{index}.json").read_text())
        assert data["schema_version"] == RUN_SCHEMA_VERSION and "partial" not in data
        process = data["process"]
        assert (process["index"], process["count"], process["source"]) == (index, 2, "jax.distributed")
        assert process["host"] and len(process["local_devices"]) == 1 and process["coordinator"]
        assert data["events"] and all(e["process"] == index for e in data["events"])
        mine = [e for e in data["events"] if e["kind"] == "jit"]
        assert {e["function"] for e in mine} == {"local_grads", "apply_update"}
        assert all(len(e["program"]["fingerprint"]) == 16 and e["program"]["hlo_zlib"] for e in mine)
        log = results[index].stdout  # what the process printed on stderr: its lines name it in a job's log
        assert f"jitscope p{index}: compile 1 of local_grads" in log
        assert f"(process {index} of 2 on {process['host']}) exited 0 after" in log


def test_same_compiles_on_every_process(launched) -> None:
    out, _ = launched("same")
    report = merged(out)
    assert report["kind"] == "jitscope.merge" and report["process_count"] == 2
    mine = [c for c in report["compiles"] if c["kind"] == "jit"]
    assert sorted(c["function"] for c in mine) == ["apply_update", "local_grads"]
    for row in mine:
        assert row["missing"] == [] and [p["process"] for p in row["processes"]] == [0, 1]
        assert len(row["programs"]) == 1 and row["programs"][0][1] == [0, 1]  # the same program everywhere
    # one all-reduce of both gradients (XLA combines them on JAX >= 0.5), or one per gradient (0.4.38)
    assert rows_of(report, "apply_update")[0]["collectives"][0].startswith("all-reduce")
    assert [f for f in report["findings"] if f["level"] == "hang"] == []
    assert [f["compiles"] for f in report["functions"]] == [[1, 1], [1, 1]]


def test_shorter_last_batch_on_one_process(launched) -> None:
    out, results = launched("short")
    assert [r.returncode for r in results] == [0, 0]
    report = merged(out)
    alone = [c for c in report["compiles"] if c["missing"]]
    assert len(alone) == 1
    row = alone[0]
    assert row["function"] == "local_grads" and row["missing"] == [0]
    (part,) = row["processes"]
    assert part["process"] == 1 and part["number"] == 2
    assert "x: shape (8, 4) -> (6, 4)" in part["cause"] and part["changed"][0] == "x: shape"
    assert part["call_site"]["file"].endswith("hosts_dp_program.py")
    findings = [f for f in report["findings"] if f["what"] == "one-process-compile"]
    assert len(findings) == 1 and findings[0]["processes"] == [1] and "p1 only, not on p0" in findings[0]["text"]
    assert "no collectives" in findings[0]["text"]  # local_grads runs on each process's own device
    assert [f["compiles"] for f in report["functions"] if f["function"] == "local_grads"] == [[1, 2]]
    text = run_cli("merge", str(out)).stdout
    assert "local_grads compile 2 compiled on p1 only, not on p0" in text
    assert "x: f32[6,4]," in text and "- " in text  # the arguments that changed, and p0 compiled none


def test_branch_on_the_process_compiles_another_program(launched) -> None:
    out, _ = launched("branch")
    report = merged(out)
    (row,) = rows_of(report, "apply_update")
    assert row["missing"] == [] and len(row["programs"]) == 2
    (diff,) = row["differences"]
    assert diff["reference"] == [0] and diff["processes"] == [1] and not diff["unavailable"]
    assert diff["reference_text"] != diff["text"]
    # the learning rate each branch used (XLA folds it with the mean's 1/2 into one constant where it can)
    assert "constant(" in diff["reference_text"] and "constant(" in diff["text"]
    assert any(f"constant({c})" in diff["text"] for c in ("0.025", "0.05"))
    assert diff["line"] > 0 and diff["computation"]
    assert diff["source"]["file"].endswith("hosts_dp_program.py")  # the user's line behind it (nearby: its user)
    assert diff["collectives"] == diff["reference_collectives"] and diff["collectives"][0].startswith("all-reduce")
    (finding,) = [f for f in report["findings"] if f["what"] == "program-mismatch"]
    assert finding["level"] == "hang" and finding["processes"] == [1] and "likely cause of a hang" in finding["text"]
    assert "same collectives (all-reduce" in finding["text"]
    (local,) = rows_of(report, "local_grads")
    assert len(local["programs"]) == 1  # the step without the branch is still the same program
    result = run_cli("merge", str(out), "--check")
    assert result.returncode == 1 and "DIFFERS on p1" in result.stdout


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_merged_report_formats(launched, tmp_path, fmt: str) -> None:
    out, _ = launched("branch")
    target = tmp_path / f"merged.{'md' if fmt == 'markdown' else 'html'}"
    result = run_cli("merge", str(out / "run.p0.json"), str(out / "run.p1.json"), "--out", str(target))
    assert result.returncode == 0, result.stderr
    text = target.read_text()
    assert "Read first" in text and "apply_update" in text and "likely cause of a hang" in text


def test_killed_process_leaves_a_partial_report(launched) -> None:
    out, results = launched("killed")
    assert results[1].returncode == -9  # SIGKILL: no exit handler ran
    data = json.loads((out / "run.p1.json").read_text())
    assert data["partial"] is True and data["exit_code"] == -1 and "still running" in data["outcome"]
    assert {e["function"] for e in data["events"] if e["kind"] == "jit"} == {"local_grads", "apply_update"}
    report = merged(out)
    partial = [f for f in report["findings"] if f["what"] == "partial"]
    assert any(f["processes"] == [1] and "never finished" in f["text"] for f in partial)
    assert next(p for p in report["processes"] if p["index"] == 1)["partial"] is True
