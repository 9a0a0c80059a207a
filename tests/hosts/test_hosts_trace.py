"""jitscope trace TARGET --processes 2: two local CPU processes joined by jax.distributed (gloo), each tracing and
compiling the call on a mesh spanning both; whether they compiled the same program, their compile times, and
jitscope merge of the saved reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.hosts.conftest import processes_runner

TARGET = "tests/hosts/hosts_bench_target.py"


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory):
    """``traced(name)`` -> (folder with the saved per-process reports, the command's result); each runs once."""
    return processes_runner(tmp_path_factory, "trace")


def test_every_process_compiled_the_same_program(traced) -> None:
    out, result = traced("normalize")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.glob("*.json")) == ["trace.p0.json", "trace.p1.json"]
    prints = []
    for index in (0, 1):
        data = json.loads((out / f"trace.p{index}.json").read_text())
        assert data["kind"] == "jitscope.trace" and data["process"]["index"] == index
        assert data["process"]["count"] == 2 and len(data["process"]["local_devices"]) == 1
        (record,) = data["traces"]
        assert len(record["program"]["fingerprint"]) == 16 and record["program"]["hlo_zlib"]
        prints.append(record["program"]["fingerprint"])
    assert prints[0] == prints[1]  # metadata removed: one SPMD program on both
    merged = json.loads(result.stdout)
    assert merged["kind"] == "jitscope.merge.trace" and merged["process_count"] == 2
    (call,) = merged["calls"]
    assert call["programs"] == [[prints[0], [0, 1]]] and call["differences"] == []
    assert "all-reduce" in " ".join(call["collectives"])
    assert [f["process"] for f in call["figures"]] == [0, 1]
    assert all(f["compile_s"] > 0 and f["trace_s"] > 0 and f["fingerprint"] == prints[0] for f in call["figures"])
    assert [f for f in merged["findings"] if f["what"] == "program-mismatch"] == []


def test_a_different_program_on_one_process_is_flagged(traced, tmp_path: Path) -> None:
    out, result = traced("branch_on_p1")
    assert result.returncode == 0, result.stderr
    merged = json.loads(result.stdout)
    (call,) = merged["calls"]
    assert len(call["programs"]) == 2
    (diff,) = call["differences"]
    assert diff["processes"] == [1] and diff["reference"] == [0]
    assert "constant(0.5)" in diff["text"] and "constant(2)" in diff["reference_text"]
    (finding,) = [f for f in merged["findings"] if f["what"] == "program-mismatch"]
    assert finding["level"] == "hang" and finding["processes"] == [1]
    assert "p1 compiled a different program from p0 with the same collectives (all-reduce)" in finding["text"]
    text = run_cli("merge", str(out))
    assert text.returncode == 0, text.stderr
    assert "jitscope trace across processes" in text.stdout and "hang: branch_on_p1(" in text.stdout
    assert "differs " in text.stdout and "trace.p1.json" in text.stdout
    again = run_cli("merge", str(out / "trace.p0.json"), str(out / "trace.p1.json"), "--format", "json")
    assert json.loads(again.stdout)["calls"] == merged["calls"]


@pytest.mark.parametrize(("args", "message"), [
    (("--processes", "3", "--mesh", "data=2"), "--processes 3 cannot share 2 devices evenly"),
    (("--processes", "1"), "--processes 1: at least 2"),
    (("--processes", "2", "--profile"), "--processes cannot be combined with --profile"),
    (("--processes", "2", "--out", "stages"), "with --processes, a report file"),
    (("--save", "t.json"), "--save goes with --processes"),
])
def test_bad_trace_processes_options(args: tuple[str, ...], message: str) -> None:
    result = run_cli("trace", f"{TARGET}:local_sum", "--shapes", "f32[8]", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("error:")]) == 1
    assert "Traceback" not in result.stderr


def test_merge_refuses_incomplete_trace_reports(traced, tmp_path: Path) -> None:
    out, _ = traced("normalize")
    result = run_cli("merge", str(out / "trace.p0.json"))
    assert result.returncode == 2 and "no report for process 1 of 2" in result.stderr
    single = json.loads((out / "trace.p0.json").read_text())
    del single["process"]
    (tmp_path / "one.json").write_text(json.dumps(single))
    result = run_cli("merge", str(tmp_path / "one.json"))
    assert result.returncode == 2 and "a single-process trace report" in result.stderr
