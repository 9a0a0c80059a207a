"""jitscope bench TARGET --processes 2: two local CPU processes joined by jax.distributed (gloo), each benching
the call on a mesh spanning both, in lockstep; their figures merged, and jitscope merge of the saved reports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.hosts.conftest import processes_runner

TARGET = "tests/hosts/hosts_bench_target.py"


@pytest.fixture(scope="module")
def benched(tmp_path_factory: pytest.TempPathFactory):
    """``benched(name)`` -> (folder with the saved per-process reports, the command's result); each runs once."""
    return processes_runner(tmp_path_factory, "bench", "--no-dispatch")


def test_each_process_benches_on_the_mesh_spanning_both(benched) -> None:
    out, result = benched("normalize")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.glob("*.json")) == ["bench.p0.json", "bench.p1.json"]
    for index in (0, 1):
        data = json.loads((out / f"bench.p{index}.json").read_text())
        assert data["kind"] == "jitscope.bench"
        process = data["process"]
        assert (process["index"], process["count"]) == (index, 2) and process["host"] and process["coordinator"]
        assert len(process["local_devices"]) == 1  # --mesh data=2 over 2 processes: one device each
        assert data["environment"]["device_count"] == 2  # the mesh spans both processes' devices
        assert data["settings"]["lockstep_rounds"] == 20
        (row,) = data["rows"]
        assert row["call"] == "f32[64,16]@(data,None)"
        assert row["cached"]["blocked"]["rounds"] == 20 and row["cached"]["blocked"]["loops"] == 1
        assert row["cached"]["warmup_calls"] == 6  # the same calls on every process, or one waits for good
    merged = json.loads(result.stdout)
    assert merged["kind"] == "jitscope.merge.bench" and merged["process_count"] == 2 and merged["rounds"] == 20
    (call,) = merged["calls"]
    assert call["target"].endswith(":normalize") and [f["process"] for f in call["figures"]] == [0, 1]
    assert all(f["cached_median_s"] > 0 and f["compile_s"] > 0 and f["rounds"] == 20 for f in call["figures"])
    skew = call["cached"]
    assert skew["ratio"] >= 1 and {skew["fastest"], skew["slowest"]} <= {0, 1}
    assert call["compile"]["ratio"] >= 1 and call["failed_on"] == []
    assert [f for f in merged["findings"] if f["what"] == "bench-failed"] == []


def test_merge_reads_the_saved_reports(benched) -> None:
    out, result = benched("normalize")
    again = run_cli("merge", str(out / "bench.p0.json"), str(out / "bench.p1.json"), "--format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["calls"] == json.loads(result.stdout)["calls"]
    text = run_cli("merge", str(out)).stdout
    assert "jitscope bench across processes" in text and "20 rounds of one call on each, in lockstep" in text
    assert "normalize(" in text and "p0" in text and "p1" in text and "skew" in text


def test_the_straggler_is_named(benched) -> None:
    out, result = benched("uneven")
    assert result.returncode == 0, result.stderr
    merged = json.loads(result.stdout)
    (call,) = merged["calls"]
    assert call["cached"]["slowest"] == 1 and call["cached"]["flagged"] is True  # 20 ms pause on p1 per call
    (finding,) = [f for f in merged["findings"] if f["what"] == "bench-straggler"]
    assert finding["processes"] == [1] and "p1 is the straggler in uneven(f32[8])'s cached calls" in finding["text"]
    assert "beyond the processes' own spread" in finding["text"]
    html = out / "merged.html"
    rendered = run_cli("merge", str(out), "--out", str(html))
    assert rendered.returncode == 0, rendered.stderr
    assert "p1 is the straggler" in html.read_text()


def test_a_call_failing_on_one_process_is_one_line(benched) -> None:
    _, result = benched("fails_on_p1")
    assert result.returncode == 1 and result.stdout == ""  # the user's code failed (on p1)
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    # p0 is either killed still waiting in the all-reduce, or its gloo transport sees p1 leave first
    assert re.search(r"process 0 of 2 (was stopped, still waiting \(in a collective\)|lost its peers in a "
                     r"collective) after process 1 had finished", lines[0]), lines[0]
    assert "ValueError: bad batch on process 1" in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (("--processes", "2", "--eager"), "--processes cannot be combined with --eager"),
    (("--processes", "3", "--mesh", "data=2"), "--processes 3 cannot share 2 devices evenly"),
    (("--processes", "1"), "--processes 1: at least 2"),
])
def test_bad_processes_options(args: tuple[str, ...], message: str) -> None:
    result = run_cli("bench", f"{TARGET}:local_sum", "--shapes", "f32[8]", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_merge_refuses_mixed_or_incomplete_bench_reports(benched, tmp_path: Path) -> None:
    out, _ = benched("normalize")
    other, _ = benched("uneven")
    result = run_cli("merge", str(out / "bench.p0.json"))
    assert result.returncode == 2 and "no report for process 1 of 2" in result.stderr
    result = run_cli("merge", str(out / "bench.p0.json"), str(other / "bench.p1.json"))
    assert result.returncode == 2 and "is from another run" in result.stderr and "bench.p1.json" in result.stderr
    result = run_cli("merge", str(out / "bench.p0.json"), str(out / "bench.p0.json"))
    assert result.returncode == 2 and "both claim process 0" in result.stderr
    single = json.loads((out / "bench.p0.json").read_text())
    del single["process"]
    (tmp_path / "one.json").write_text(json.dumps(single))
    result = run_cli("merge", str(tmp_path / "one.json"))
    assert result.returncode == 2 and "a single-process bench report" in result.stderr
    (tmp_path / "run.json").write_text(json.dumps({"kind": "jitscope.run", "schema_version": "1.3"}))
    result = run_cli("merge", str(out / "bench.p0.json"), str(tmp_path / "run.json"))
    assert result.returncode == 2 and "run.json: not a jitscope bench report" in result.stderr
