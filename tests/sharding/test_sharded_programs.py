"""trace, bench and lint --trace over a device mesh, on 8 virtual CPU devices.

JAX fixes its device count when it starts and this test process already has one device, so
every command runs in subprocesses: ``driver.py`` runs most of them in ONE process started
with 8 devices (one JAX start, which keeps the suite quick on a 2-core CI machine), and one
test runs ``python -m jitscope`` itself to check that ``--mesh`` sets the device count up
before JAX starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jitscope.model.common import from_jsonable
from jitscope.model.trace import TraceReport
from tests.conftest import EXAMPLES, ROOT, STYLE_ENV, run_cli

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in STYLE_ENV}
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "PYTHONPATH": str(ROOT)})
    proc = subprocess.run([sys.executable, str(HERE / "driver.py")], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads(proc.stdout))


def sharding(results: dict[str, Any], name: str) -> dict[str, Any]:
    run = results[name]
    assert run["code"] == 0, run["stderr"]
    return dict(json.loads(run["stdout"])["traces"][0]["sharding"])


def test_data_parallel_step_all_reduces_the_gradients(results: dict[str, Any]) -> None:
    s = sharding(results, "dp")
    assert s["mesh"]["axes"] == [["data", 8]] and s["devices"] == 8
    leaves = {leaf["path"]: leaf for leaf in s["inputs"]}
    assert leaves["x"]["spec"] == "(data)" and leaves["x"]["shard_shape"] == [32, 512]
    assert leaves["x"]["shard_bytes"] == 32 * 512 * 4 and leaves["x"]["global_bytes"] == 256 * 512 * 4
    assert leaves["params['w1']"]["replicated"] and leaves["params['w1']"]["shard_shape"] == [512, 1024]
    kinds = {c["kind"] for c in s["collectives"]}
    assert kinds == {"all-reduce"}  # one combined all-reduce (JAX >= 0.5) or one per gradient (older XLA)
    grads = 4 * (512 * 1024 + 1024 + 1024 * 10 + 10)
    assert sum(c["send_bytes"] for c in s["collectives"]) == pytest.approx(2 * 7 / 8 * grads, rel=0.01)
    assert all(c["axes"] == ["data"] and c["group_size"] == 8 for c in s["collectives"])
    assert all(c["file"].endswith("sharded_data_parallel.py") and c["line"] > 0 for c in s["collectives"])
    assert s["by_line"] and s["by_line"][0]["source"]


def test_tensor_parallel_layer_all_reduces_over_model_only(results: dict[str, Any]) -> None:
    s = sharding(results, "tp")
    (c,) = s["collectives"]
    assert (c["kind"], c["axes"], c["group_size"], c["groups"]) == ("all-reduce", ["model"], 2, 4)
    assert c["shape"] == [16, 512] and c["send_bytes"] == 16 * 512 * 4  # 2 * (2-1)/2 * B
    assert "w_out" in Path(c["file"]).read_text().splitlines()[c["line"] - 1]
    leaves = {leaf["path"]: leaf for leaf in s["inputs"]}
    assert leaves["params['w_in']"]["spec"] == "(None,model)" and leaves["params['w_in']"]["shard_shape"] == [512, 1024]


def test_the_example_declares_its_mesh(results: dict[str, Any]) -> None:
    # no --mesh: the example's "mesh" key sets it up, as context mesh too (the layer's bare PartitionSpec)
    assert sharding(results, "tp_example_mesh")["collectives"] == sharding(results, "tp")["collectives"]


def test_tensor_parallel_text_report(results: dict[str, Any]) -> None:
    out = results["tp_text"]["stdout"]
    for text in ("sharding  8 devices; memory analysis is per device", "mesh                 data=4, model=2",
                 "what each device holds", "collectives in the optimised HLO", "communication by source line",
                 "all-reduce  f32[16,512]    model   2 x4  32 KiB    32 KiB  sharded_tensor_parallel.py:"):
        assert text in out


def test_shard_map_collectives_are_attributed_to_their_lines(results: dict[str, Any]) -> None:
    s = sharding(results, "shard_map")
    by_kind = {c["kind"]: c for c in s["collectives"]}
    source = (EXAMPLES / "sharded_shard_map.py").read_text().splitlines()
    assert "ppermute" in source[by_kind["collective-permute"]["line"] - 1]
    assert "psum" in source[by_kind["all-reduce"]["line"] - 1]
    assert by_kind["collective-permute"]["send_bytes"] == 128 * 256 * 4
    assert s["warnings"] == []  # collectives written in shard_map are not "unasked" resharding


def test_gather_inside_a_scan_body_is_flagged(results: dict[str, Any]) -> None:
    s = sharding(results, "fsdp")
    gathers = [c for c in s["collectives"] if c["kind"] == "all-gather"]
    assert gathers and all(c["in_loop"] for c in gathers)
    assert [w["kind"] for w in s["warnings"]] == ["gather-in-loop"]


def test_unrequested_gather_of_an_input_is_flagged_and_requested_ones_are_not(results: dict[str, Any]) -> None:
    cumsum = sharding(results, "cumsum")
    (gather,) = cumsum["collectives"]
    assert gather["kind"] == "all-gather" and gather["on_parameter"] == "x"
    if "jit(" in gather["op_name"]:  # newer XLA names the gather after the parameter: no op path to judge by
        assert [w["kind"] for w in cumsum["warnings"]] == ["resharded"]
        assert "input x" in cumsum["warnings"][0]["message"]
    assert sharding(results, "gather")["warnings"] == []  # with_sharding_constraint(x, P()) asked for it
    declared = sharding(results, "declared")  # jit(in_shardings=P('data'), out_shardings=P())
    assert declared["warnings"] == []
    assert [(leaf["role"], leaf["spec"]) for leaf in declared["inputs"] + declared["outputs"]] == [
        ("input", "(data)"), ("output", "()")]


def test_a_mesh_with_no_sharded_argument_says_so(results: dict[str, Any]) -> None:
    s = sharding(results, "unsharded")  # one device, or (newer JAX, mesh as context) all of it replicated
    assert [w["kind"] for w in s["warnings"]] == ["nothing-sharded"]


def test_example_shape_dtype_struct_brings_its_own_mesh(results: dict[str, Any]) -> None:
    s = sharding(results, "example_sds")
    assert s["mesh"]["axes"] == [["data", 4]]
    assert s["inputs"][0]["spec"] == "(data)" and s["inputs"][0]["shard_shape"] == [16, 32]


def test_markdown_report_has_the_sharding_section(results: dict[str, Any]) -> None:
    out = results["markdown"]["stdout"]
    assert "### sharding" in out and "#### communication by source line" in out
    assert "| input | x | f32[256,512] | (data) | f32[32,512] | 64 KiB |" in out


def test_json_document_round_trips(results: dict[str, Any]) -> None:
    doc = json.loads(results["tp"]["stdout"])
    assert doc["schema_version"] == "1.6"
    report = from_jsonable(TraceReport, doc)
    record = report.traces[0].sharding
    assert record is not None and record.mesh is not None and str(record.mesh) == "data=4, model=2"
    assert record.counts() == {"all-reduce": 1}
    doc["traces"][0].pop("sharding")  # a 1.2 document has no sharding: it still loads
    assert from_jsonable(TraceReport, {**doc, "schema_version": "1.2"}).traces[0].sharding is None


def test_lint_reports_a_sharding_change_as_a_recompile_cause(results: dict[str, Any]) -> None:
    run = results["lint"]
    findings = json.loads(run["stdout"])["findings"]
    messages = [f["message"] for f in findings if f["code"] == "JS306"]
    assert len(messages) == 1  # call 3 repeats call 2's sharding: a cache hit
    assert "call 2 of 3" in messages[0] and "x: sharding (data,None) -> (None,data)" in messages[0]


def test_bench_times_the_sharded_step_on_every_device(results: dict[str, Any]) -> None:
    run = results["bench"]
    assert run["code"] == 0, run["stderr"]
    report = json.loads(run["stdout"])
    assert report["environment"]["device_count"] == 8 and not report["failures"]
    assert report["rows"][0]["call"].startswith("{'w1': f32[512,1024]@()")


def test_profile_splits_compute_from_communication(results: dict[str, Any]) -> None:
    run = results["profile"]
    if run["code"] == 2 and "unsupported JAX version" in run["stderr"]:
        pytest.skip("jitscope profile needs jax.profiler.ProfileData (JAX >= 0.6)")
    assert run["code"] == 0, run["stderr"]
    section = run["stdout"].split("compute and communication", 1)[1].split("where a call's time goes")[0]
    assert "communication (collectives)" in section and "compute" in section


@pytest.mark.parametrize(("name", "message"), [
    ("too_late", "--devices 16: JAX already started with 8 CPU device(s), too late to ask for 16"),
    ("bad_mesh", "--mesh data=3 needs 3 devices, but 8 are in use"),
    ("bad_syntax", "bad --mesh 'data:8': 'data:8' is not NAME=SIZE"),
    ("no_mesh", "f32[8]@(data) has a sharding but no mesh is set up"),
    ("unknown_axis", "f32[8]@(model): unknown mesh axis 'model' in (model)"),
    ("not_divisible", "f32[12]@(data): dimension 0 (size 12) is not divisible by 8"),
    ("rank", "f32[8]@(data,None): sharding (data,None) has 2 entries but the array has 1 dimension(s)"),
])
def test_errors_are_one_line_with_exit_code_2(results: dict[str, Any], name: str, message: str) -> None:
    run = results[name]
    assert run["code"] == 2
    lines = run["stderr"].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}")


def test_mesh_sets_the_device_count_before_jax_starts() -> None:
    # --mesh overrides the example's own mesh (data=8); JAX starts with the 4 devices asked for
    result = run_cli("trace", "sharded_shard_map.py:normalise_and_shift", "--mesh", "data=4", "--stages", "memory",
                     "-f", "json", cwd=EXAMPLES)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["environment"]["device_count"] == 4
    assert doc["traces"][0]["sharding"]["devices"] == 4
