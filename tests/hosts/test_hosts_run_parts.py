"""The pieces of jitscope run in one process of several: file names, the launcher's rank, program fingerprints,
and a single-process run left exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path

from jitscope.model.common import to_jsonable
from jitscope.model.run import RUN_SCHEMA_VERSION, CompileEvent, ProcessInfo, RunRecord
from jitscope.run.processes import launcher_process, process_path, report_path
from jitscope.run.programs import canonical_lines, compiled_program, fingerprint, unpack_hlo
from tests.conftest import EXAMPLES, run_cli

HLO = """HloModule jit_step, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

FileNames
1 "/home/alice/train.py"

FileLocations
1 {file_name_id=1 function_name_id=1 line=12 end_line=12 column=4 end_column=9}

ENTRY %main.3 (x.1: f32[4]) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0), metadata={op_name="x"}
  %constant.2 = f32[] constant(0.1)
  ROOT %mul = f32[4]{0} multiply(%x.1, %constant.2), metadata={op_name="jit(step)/mul" stack_frame_id=1}
}
"""


def test_per_process_file_names(tmp_path: Path) -> None:
    assert process_path("run.json", 1) == "run.p1.json"
    assert process_path("out/run.md", 0, ".md") == "out/run.p0.md"
    assert process_path("report", 3) == "report.p3"
    assert process_path("runs/", 2) == "runs/run.p2.json"
    assert process_path(str(tmp_path), 2) == str(tmp_path / "run.p2.json")  # an existing folder
    info = ProcessInfo(index=5, count=8, host="h")
    assert report_path("run.html", info, "html") == "run.p5.html"
    assert report_path("run.json", None, "json") == "run.json"  # one process: as given
    assert report_path("runs/", None, "markdown") == "runs/run.md"  # a folder: its run file


def test_launcher_rank_when_jax_never_said() -> None:
    assert launcher_process({"SLURM_PROCID": "3", "SLURM_NTASKS": "4"}) == (3, 4, "SLURM_PROCID")
    assert launcher_process({"RANK": "1", "WORLD_SIZE": "2"}) == (1, 2, "RANK")
    assert launcher_process({"RANK": "0", "WORLD_SIZE": "1"}) is None  # one process
    assert launcher_process({}) is None


def test_fingerprint_ignores_what_differs_between_hosts() -> None:
    elsewhere = HLO.replace("/home/alice", "/scratch/bob").replace('op_name="x"', 'op_name="x" source_line=3')
    assert fingerprint(HLO) == fingerprint(elsewhere)
    assert fingerprint(HLO) != fingerprint(HLO.replace("constant(0.1)", "constant(0.05)"))
    lines = canonical_lines(HLO)
    assert not any("metadata" in line or "FileNames" in line or "alice" in line for line in lines)
    program = compiled_program(HLO, "jaxfp")
    assert unpack_hlo(program) == HLO and program.jax_fingerprint == "jaxfp" and not program.truncated


def test_single_process_documents_are_unchanged() -> None:
    event = CompileEvent(index=1, function="f", defined_at=None, call_site=None, number=1)
    record = RunRecord(program="p.py", argv=(), exit_code=0, outcome="exited 0", wall_s=1.0, events=(event,),
                       functions=())
    data = to_jsonable(record)
    assert "process" not in data and "partial" not in data and data["schema_version"] == RUN_SCHEMA_VERSION
    assert "process" not in data["events"][0] and "program" not in data["events"][0]


def test_single_process_run_writes_its_file_as_named(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    result = run_cli("run", "--log", "none", "--out", str(out), str(EXAMPLES / "train_loop_fixed.py"))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]
    data = json.loads(out.read_text())
    assert data["schema_version"] == RUN_SCHEMA_VERSION and "process" not in data
    assert all("process" not in e and "program" not in e for e in data["events"])
