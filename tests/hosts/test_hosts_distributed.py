"""bench/trace/profile --distributed inside the processes of a job someone else launched: a Slurm job faked for
2 local processes (what JAX's SlurmCluster reads: SLURM_JOB_ID, SLURM_NTASKS, SLURM_PROCID, SLURM_LOCALID,
SLURM_STEP_NODELIST), each running ``python -m jitscope ... --distributed`` as ``srun -n 2`` would start it.

JAX's SlurmCluster puts the coordinator on the first node at port ``SLURM_JOB_ID % 4096 + 61440``: each job
here gets a job id whose port was free a moment ago, so jobs running side by side (xdist) do not meet.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, STYLE_ENV, run_cli
from tests.docs_excerpts import assert_shown
from tests.hosts.conftest import cpu_collectives_reason

TARGET = "tests/hosts/hosts_bench_target.py"
#: Seconds a job may take before its processes are killed (two processes take 2-5 s on 2 busy cores).
JOB_TIMEOUT_S = 90
#: Where a job's environment comes from: what would make JAX detect another cluster, or set the devices, is left out.
FOREIGN = ("SLURM_", "OMPI_", "PMI_", "PMIX_", "MEGASCALE_", "TPU_", "JAX_COORDINATOR", "JAX_NUM_PROCESSES",
           "JAX_PROCESS_ID", "JAX_LOCAL_DEVICE_IDS", "KUBERNETES_SERVICE_HOST", "JITSCOPE_PROCESS", "XLA_FLAGS",
           "JAX_NUM_CPU_DEVICES")


def slurm_port() -> int:
    """A free port among those SlurmCluster picks from (61440-65535; above Linux's ephemeral range)."""
    for _ in range(200):
        port = random.randint(61440, 65535)
        with socket.socket() as sock:
            try:
                sock.bind(("", port))
            except OSError:
                continue
            return port
    pytest.skip("no free port in 61440-65535 for a fake Slurm job's coordinator")


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in STYLE_ENV and not k.startswith(FOREIGN)}
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "JAX_PLATFORMS": "cpu"})
    return env


def slurm_job(argvs: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    """``srun -n len(argvs)``, faked: process i runs ``python -m jitscope argvs[i]...``; their results by index.
    Skipped where this JAX cannot run collectives across CPU processes (no gloo)."""
    reason = cpu_collectives_reason()
    if reason is not None:
        pytest.skip(reason)
    port = slurm_port()
    job_id = port - 61440 + 4096 * random.randint(1, 200)
    env = {**base_env(), "SLURM_JOB_ID": str(job_id), "SLURM_NTASKS": str(len(argvs)),
           "SLURM_STEP_NODELIST": "localhost", "SLURM_STEP_NUM_NODES": "1", "SLURM_NNODES": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "jitscope", *argv], cwd=ROOT, text=True,
                              env={**env, "SLURM_PROCID": str(i), "SLURM_LOCALID": str(i)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
             for i, argv in enumerate(argvs)]
    deadline = time.monotonic() + JOB_TIMEOUT_S
    results = []
    try:
        for proc in procs:
            stdout, stderr = proc.communicate(timeout=max(deadline - time.monotonic(), 1))
            results.append(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return results


@pytest.fixture(scope="module")
def benched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[subprocess.CompletedProcess[str]]]:
    """``srun -n 2 jitscope bench normalize --mesh data=2 --distributed --save DIR/bench.json``, once."""
    out = tmp_path_factory.mktemp("distributed-bench")
    argv = ["bench", f"{TARGET}:normalize", "--shapes", "f32[64,16]@(data,None)", "--mesh", "data=2",
            "--distributed", "--no-dispatch", "--save", str(out / "bench.json")]
    return out, slurm_job([argv, argv])


def test_each_process_saves_its_report_and_process_0_prints_them_merged(benched) -> None:
    out, (p0, p1) = benched
    assert (p0.returncode, p1.returncode) == (0, 0), p0.stderr + p1.stderr
    assert sorted(p.name for p in out.glob("*.json")) == ["bench.p0.json", "bench.p1.json"]
    coordinators = set()
    for index in (0, 1):
        data = json.loads((out / f"bench.p{index}.json").read_text())
        process = data["process"]
        assert (process["index"], process["count"]) == (index, 2) and process["host"]
        assert len(process["local_devices"]) == 1 and data["environment"]["device_count"] == 2
        assert data["settings"]["lockstep_rounds"] == 20
        coordinators.add(process["coordinator"])
    assert len(coordinators) == 1 and coordinators.pop().startswith("localhost:")  # SlurmCluster's, from the job id
    assert "jitscope bench across processes" in p0.stdout and "20 rounds of one call on each, in lockstep" in p0.stdout
    assert "normalize(f32[64,16]@(data,None))" in p0.stdout and "bench.p1.json" in p0.stdout
    assert "[Gloo]" not in p0.stdout  # stdout is the merged report alone
    assert p1.stdout == ""
    (line,) = [line for line in p1.stderr.splitlines() if line.startswith("jitscope bench:")]
    assert "process 1 of 2" in line and "bench.p1.json" in line and "process 0" in line


def test_merge_reads_the_saved_reports(benched) -> None:
    out, _ = benched
    again = run_cli("merge", str(out), "--format", "json")
    assert again.returncode == 0, again.stderr
    merged = json.loads(again.stdout)
    assert merged["kind"] == "jitscope.merge.bench" and [p["index"] for p in merged["processes"]] == [0, 1]


def test_trace_finds_the_program_mismatch_in_json_on_stdout(tmp_path: Path) -> None:
    """Process 0's stdout is the merged JSON document alone (gloo's lines and the others' go elsewhere)."""
    argv = ["trace", f"{TARGET}:branch_on_p1", "--shapes", "f32[64,16]@(data,None)", "--mesh", "data=2",
            "--distributed", "--format", "json", "--save", str(tmp_path / "trace.json")]
    p0, p1 = slurm_job([argv, argv])
    assert (p0.returncode, p1.returncode) == (0, 0), p0.stderr + p1.stderr
    merged = json.loads(p0.stdout)
    assert merged["kind"] == "jitscope.merge.trace" and merged["process_count"] == 2
    (call,) = merged["calls"]
    assert [procs for _, procs in call["programs"]] == [[0], [1]]  # two programs: p1 took the other branch
    assert any(f["what"] == "program-mismatch" for f in merged["findings"])
    assert p1.stdout == "" and sorted(p.name for p in tmp_path.glob("*.json")) == ["trace.p0.json", "trace.p1.json"]


def test_profile_prints_the_merged_device_time(tmp_path: Path) -> None:
    argv = ["profile", f"{TARGET}:normalize", "--shapes", "f32[64,16]@(data,None)", "--mesh", "data=2",
            "--distributed", "--calls", "5", "--out", str(tmp_path / "merged.json")]
    p0, p1 = slurm_job([argv, argv])
    assert (p0.returncode, p1.returncode) == (0, 0), p0.stderr + p1.stderr
    merged = json.loads((tmp_path / "merged.json").read_text())  # --out: process 0's merged report
    assert merged["kind"] == "jitscope.merge.profile" and merged["captured"] == 5
    (call,) = merged["calls"]
    assert [t["process"] for t in call["totals"]] == [0, 1] and all(t["device_s"] > 0 for t in call["totals"])
    assert p0.stdout == p1.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == ["merged.json"]


def test_a_job_of_one_process_shows_its_own_report(tmp_path: Path) -> None:
    (p0,) = slurm_job([["trace", f"{TARGET}:local_sum", "--shapes", "f32[8]", "--distributed",
                        "--save", str(tmp_path / "trace.json")]])
    assert p0.returncode == 0, p0.stderr
    assert p0.stdout.startswith("tests/hosts/hosts_bench_target.py:local_sum") and "call: local_sum" in p0.stdout
    assert "across processes" not in p0.stdout and "gathering" not in p0.stderr
    assert json.loads((tmp_path / "trace.p0.json").read_text())["process"]["count"] == 1


def test_a_process_that_fails_is_named_by_process_0(tmp_path: Path) -> None:
    """Process 1's spec is wrong (its error line goes to process 0 in place of its report); process 0 shows its own
    report and says which process failed and why (exit 1), rather than waiting for a report that will not come."""
    argv = ["bench", f"{TARGET}:local_sum", "--distributed", "--no-dispatch", "--min-rounds", "5"]
    p0, p1 = slurm_job([[*argv, "--shapes", "f32[8]"], [*argv, "--shapes", "f32[8"]])
    assert p1.returncode == 2 and "error:" in p1.stderr
    assert p0.returncode == 1, p0.stderr
    (error,) = [line for line in p0.stderr.splitlines() if line.startswith("error:")]
    assert "process 1 of 2 failed:" in error and "f32[8" in error and "process 0's own report" in error
    assert "local_sum(f32[8])" in p0.stdout and "across processes" not in p0.stdout
    assert_shown(error, "guides/sharded.md", "error: process 1 of 2 failed:")  # the page shows this line


def test_no_cluster_and_both_switches_are_one_line_each() -> None:
    env = {k: v for k, v in base_env().items() if k != "JAX_PLATFORMS"}
    alone = subprocess.run([sys.executable, "-m", "jitscope", "trace", f"{TARGET}:local_sum", "--shapes", "f32[8]",
                            "--distributed"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                           check=False)
    assert alone.returncode == 2 and alone.stdout == ""
    (line,) = alone.stderr.strip().splitlines()
    assert "JAX found no cluster" in line and "srun" in line and "JAX_COORDINATOR_ADDRESS" in line
    by_hand = subprocess.run([sys.executable, "-m", "jitscope", "bench", f"{TARGET}:local_sum", "--shapes", "f32[8]",
                              "--distributed"], cwd=ROOT, env={**env, "JAX_COORDINATOR_ADDRESS": "127.0.0.1:1"},
                             capture_output=True, text=True, timeout=120, check=False)
    assert by_hand.returncode == 2 and len(by_hand.stderr.strip().splitlines()) == 1
    assert "a coordinator but no process count" in by_hand.stderr and "JAX_NUM_PROCESSES" in by_hand.stderr
    for command in ("bench", "profile", "trace"):
        both = run_cli(command, f"{TARGET}:local_sum", "--shapes", "f32[8]", "--distributed", "--processes", "2")
        assert both.returncode == 2 and len(both.stderr.strip().splitlines()) == 1
        assert "--distributed and --processes cannot be combined" in both.stderr
