"""jitscope profile TARGET --processes 2: two local CPU processes joined by jax.distributed (gloo), each profiling
the call on a mesh spanning both in lockstep; their device time by source line merged, and jitscope merge of the
saved reports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.hosts.conftest import processes_runner

TARGET = "tests/hosts/hosts_bench_target.py"


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory):
    """``profiled(name)`` -> (folder with the saved per-process reports, the command's result); each runs once."""
    return processes_runner(tmp_path_factory, "profile", "--calls", "10")


def test_each_process_profiles_on_the_mesh_spanning_both(profiled) -> None:
    out, result = profiled("normalize")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.glob("*.json")) == ["profile.p0.json", "profile.p1.json"]
    for index in (0, 1):
        data = json.loads((out / f"profile.p{index}.json").read_text())
        assert data["kind"] == "jitscope.profile"
        process = data["process"]
        assert (process["index"], process["count"]) == (index, 2) and process["host"] and process["coordinator"]
        assert len(process["local_devices"]) == 1  # --mesh data=2 over 2 processes: one device each
        assert data["environment"]["device_count"] == 2  # the mesh spans both processes' devices
        assert data["settings"]["lockstep_rounds"] == 20 and data["settings"]["calls"] == 10
        (row,) = data["rows"]
        assert row["cached"]["rounds"] == 20 and row["cached"]["loops"] == 1  # the same calls on every process
        assert "collective" in {op["category"] for op in row["ops"]}  # the mean's all-reduce crosses processes
        assert row["lines"] and row["lines"][0]["location"]["file"].endswith("hosts_bench_target.py")
    merged = json.loads(result.stdout)
    assert merged["kind"] == "jitscope.merge.profile" and merged["process_count"] == 2
    assert merged["rounds"] == 20 and merged["captured"] == 10
    (call,) = merged["calls"]
    assert call["target"].endswith(":normalize") and call["failed_on"] == []
    assert [t["process"] for t in call["totals"]] == [0, 1]
    for totals in call["totals"]:
        assert totals["device_s"] > 0 and totals["compute_s"] > 0 and totals["collective_s"] > 0
        parts = totals["compute_s"] + totals["collective_s"] + totals["other_s"]
        assert parts == pytest.approx(totals["device_s"], rel=1e-6)
        assert totals["measured_s"] > 0
    assert call["device"]["ratio"] >= 1 and {call["device"]["fastest"], call["device"]["slowest"]} == {0, 1}
    line = call["lines"][0]
    assert line["location"]["line"] == 11  # normalize's one line
    assert [f["process"] for f in line["figures"]] == [0, 1] and all(f["seconds"] > 0 for f in line["figures"])


def test_merge_reads_the_saved_profile_reports(profiled) -> None:
    out, result = profiled("normalize")
    again = run_cli("merge", str(out / "profile.p0.json"), str(out / "profile.p1.json"), "--format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["calls"] == json.loads(result.stdout)["calls"]
    text = run_cli("merge", str(out))
    assert text.returncode == 0, text.stderr
    assert "jitscope profile across processes" in text.stdout
    assert "20 timed rounds and 10 profiled calls on each, in lockstep" in text.stdout
    assert "normalize(f32[64,16]@(data,None))  per call; collectives: waiting included" in text.stdout
    assert "compute  collectives" in text.stdout and "Top lines" in text.stdout
    assert "hosts_bench_target.py:11" in text.stdout and "profile.p1.json" in text.stdout


def test_the_straggler_and_its_line_are_named(profiled, tmp_path: Path) -> None:
    out, result = profiled("uneven")
    assert result.returncode == 0, result.stderr
    merged = json.loads(result.stdout)
    (call,) = merged["calls"]
    assert call["compute"]["slowest"] == 1 and call["compute"]["flagged"] is True  # 20 ms pause on p1 per call
    (finding,) = [f for f in merged["findings"] if f["what"] == "compute-straggler"]
    assert finding["processes"] == [1] and "p1 is the straggler in uneven(f32[8])" in finding["text"]
    (line,) = [f for f in merged["findings"] if f["what"] == "line-straggler"]
    assert line["processes"] == [1] and "p1 spends" in line["text"] and "hosts_bench_target.py:26" in line["text"]
    html = tmp_path / "merged.html"
    rendered = run_cli("merge", str(out), "--out", str(html))
    assert rendered.returncode == 0, rendered.stderr
    assert "p1 is the straggler" in html.read_text()


def test_a_call_failing_on_one_process_is_one_line(profiled) -> None:
    _, result = profiled("fails_on_p1")
    assert result.returncode == 1 and result.stdout == ""  # the user's code failed (on p1)
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    # p0 is either killed still waiting in the all-reduce, or its gloo transport sees p1 leave first
    assert re.search(r"process 0 of 2 (was stopped, still waiting \(in a collective\)|lost its peers in a "
                     r"collective) after process 1 had finished", lines[0]), lines[0]
    assert "ValueError: bad batch on process 1" in lines[0] and "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (("--processes", "3", "--mesh", "data=2"), "--processes 3 cannot share 2 devices evenly"),
    (("--processes", "1"), "--processes 1: at least 2"),
    (("--processes", "2", "--trace-out", "raw"), "--processes cannot be combined with --trace-out"),
    (("--save", "p.json"), "--save goes with --processes"),
])
def test_bad_profile_processes_options(args: tuple[str, ...], message: str) -> None:
    result = run_cli("profile", f"{TARGET}:local_sum", "--shapes", "f32[8]", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("error:")]) == 1
    assert "Traceback" not in result.stderr


def test_merge_refuses_mixed_or_incomplete_profile_reports(profiled, tmp_path: Path) -> None:
    out, _ = profiled("normalize")
    other, _ = profiled("uneven")
    result = run_cli("merge", str(out / "profile.p0.json"))
    assert result.returncode == 2 and "no report for process 1 of 2" in result.stderr
    result = run_cli("merge", str(out / "profile.p0.json"), str(other / "profile.p1.json"))
    assert result.returncode == 2 and "is from another run" in result.stderr
    single = json.loads((out / "profile.p0.json").read_text())
    del single["process"]
    (tmp_path / "one.json").write_text(json.dumps(single))
    result = run_cli("merge", str(tmp_path / "one.json"))
    assert result.returncode == 2 and "a single-process profile report" in result.stderr
    (tmp_path / "bench.json").write_text(json.dumps({"kind": "jitscope.bench", "schema_version": "1.0"}))
    result = run_cli("merge", str(out / "profile.p0.json"), str(tmp_path / "bench.json"))
    assert result.returncode == 2 and "bench.json: not a jitscope profile report" in result.stderr
