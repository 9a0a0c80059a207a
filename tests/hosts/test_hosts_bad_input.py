"""jitscope merge on reports that are not one run's: one line naming the file, exit 2."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from jitscope.model.common import Location, to_jsonable
from jitscope.model.run import (
    RUN_SCHEMA_VERSION_PROCESSES,
    CompiledProgram,
    CompileEvent,
    ProcessInfo,
    RunRecord,
)
from jitscope.run.summary import summarize
from tests.conftest import run_cli

STARTED = 1_800_000_000.0


def record(index: int, count: int = 2, *, argv: tuple[str, ...] = ("--steps", "3"), started: float = STARTED,
           events: tuple[CompileEvent, ...] | None = None, partial: bool = False,
           coordinator: str = "10.0.0.1:1234") -> RunRecord:
    if events is None:
        events = (CompileEvent(index=1, function="step", defined_at=Location("train.py", 10, "step"),
                               call_site=Location("train.py", 30, "main"), number=1, signature="x: f32[8,4]",
                               at_s=1.0, traced=True, compiled=True, trace_s=0.01, compile_s=0.1, process=index,
                               program=CompiledProgram("0123456789abcdef")),)
    process = ProcessInfo(index=index, count=count, host=f"node{index}", local_devices=(f"cpu:{index}",), pid=100,
                          started_unix=started, coordinator=coordinator)
    return RunRecord(program="train.py", argv=argv, exit_code=-1 if partial else 0,
                     outcome="still running" if partial else "exited 0", wall_s=3.0, events=events,
                     functions=summarize(events), process=process, partial=partial,
                     schema_version=RUN_SCHEMA_VERSION_PROCESSES)


def write(path: Path, rec: RunRecord | dict) -> str:
    data = rec if isinstance(rec, dict) else to_jsonable(rec)
    path.write_text(json.dumps(data))
    return str(path)


def merge_error(*paths: str) -> str:
    result = run_cli("merge", *paths)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_a_good_pair_merges(tmp_path: Path) -> None:
    a, b = write(tmp_path / "run.p0.json", record(0)), write(tmp_path / "run.p1.json", record(1))
    result = run_cli("merge", a, b, "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [p["host"] for p in data["processes"]] == ["node0", "node1"]
    assert data["compiles"][0]["programs"] == [["0123456789abcdef", [0, 1]]]


def test_missing_process(tmp_path: Path) -> None:
    a = write(tmp_path / "run.p0.json", record(0, 3))
    write(tmp_path / "run.p2.json", record(2, 3))
    line = merge_error(str(tmp_path))
    assert "no report for process p1 of 3" in line and "run.p1.json" in line
    result = run_cli("merge", str(tmp_path), "--allow-missing")
    assert result.returncode == 0 and "no report for p1 of 3" in result.stdout
    del a


def test_two_files_claim_one_process(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", record(1))
    b = write(tmp_path / "b.json", record(1))
    write(tmp_path / "c.json", record(0))
    line = merge_error(str(tmp_path))
    assert a in line and b in line and "both claim process 1" in line


@pytest.mark.parametrize(("change", "what"), [
    ({"coordinator": "10.0.0.2:1234"}, "coordinator '10.0.0.2:1234', not '10.0.0.1:1234'"),
    ({"count": 3}, "process count 3, not 2"),
])
def test_files_of_different_runs(tmp_path: Path, change: dict, what: str) -> None:
    a = write(tmp_path / "run.p0.json", record(0))
    b = write(tmp_path / "run.p1.json", record(1))
    odd = write(tmp_path / "other.p1.json", record(1, **change))
    line = merge_error(a, odd, b)
    assert odd in line and "from another run" in line and what in line


def test_processes_launched_with_their_index_in_argv_are_one_run(tmp_path: Path) -> None:
    """``python prog.py PROCESS_ID NUM_PROCESSES PORT``, as JAX's multi-process docs launch by hand: each
    process has its own argv; the coordinator, count, indices and start times say they are one run."""
    paths = [write(tmp_path / f"run.p{i}.json", record(i, argv=(str(i), "2", "1234"))) for i in (0, 1)]
    result = run_cli("merge", *paths, "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["notes"] == ["the processes were given different arguments (p0: 0 2 1234; p1: 1 2 1234); the "
                             "title shows p0's"]
    assert data["compiles"][0]["programs"] == [["0123456789abcdef", [0, 1]]]


def test_runs_that_never_overlapped(tmp_path: Path) -> None:
    a = write(tmp_path / "run.p0.json", record(0))
    b = write(tmp_path / "later.p1.json", record(1, started=STARTED + 3600))
    line = merge_error(a, b)
    assert b in line and "another run" in line and "after" in line


def test_schema_versions(tmp_path: Path) -> None:
    good = write(tmp_path / "run.p0.json", record(0))
    future = to_jsonable(record(1))
    future["schema_version"] = "2.0"
    b = write(tmp_path / "run.p1.json", future)
    line = merge_error(good, b)
    assert b in line and "schema 2.0" in line
    single = to_jsonable(record(1))
    single["schema_version"] = "1.2"
    del single["process"]
    c = write(tmp_path / "single.json", single)
    line = merge_error(good, c)
    assert c in line and "single-process" in line


def test_not_a_run_report(tmp_path: Path) -> None:
    good = write(tmp_path / "run.p0.json", record(0))
    other = write(tmp_path / "bench.json", {"kind": "jitscope.bench", "schema_version": "1.0"})
    line = merge_error(good, other)
    assert other in line and "not a jitscope run report" in line
    garbage = tmp_path / "broken.json"
    garbage.write_text("{ not json")
    assert str(garbage) in merge_error(good, str(garbage))
    assert "no such file" in merge_error(str(tmp_path / "absent.json"))


def test_partial_report_is_named_first(tmp_path: Path) -> None:
    a = write(tmp_path / "run.p0.json", record(0))
    late = CompileEvent(index=2, function="step", defined_at=Location("train.py", 10, "step"), call_site=None,
                        number=2, signature="x: f32[6,4]", at_s=2.0, traced=True, compiled=True, process=0,
                        program=CompiledProgram("fedcba9876543210"))
    a = write(tmp_path / "run.p0.json", replace(record(0), events=(*record(0).events, late)))
    b = write(tmp_path / "run.p1.json", record(1, partial=True))
    result = run_cli("merge", a, b, "--format", "json")
    assert result.returncode == 0, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert findings[0]["what"] == "partial" and findings[0]["processes"] == [1]
    assert "the others went on to step compile 2" in findings[0]["text"]
    # the compile p1 never reached is told with p1's stop, not as a compile p0 made alone
    assert not [f for f in findings if f["what"] == "one-process-compile"]
