"""``jitscope run --capture DIR`` and ``trace|bench|profile TARGET --from DIR --compile K``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jitscope.errors import UsageError
from jitscope.run.signature import KIND, SCHEMA_VERSION, read_capture

HERE = Path(__file__).resolve().parents[1] / "targets" / "from_run"


def jitscope(*args: str, cwd: Path = HERE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "jitscope", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300, check=False)


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("capture")
    proc = jitscope("run", "--log", "none", "--capture", str(folder), "train.py", "3")
    assert proc.returncode == 0, proc.stderr
    assert f"2 compile signature(s) captured in {folder}" in proc.stderr
    return folder


def test_every_compile_of_the_users_function_is_saved_in_a_versioned_document(capture: Path) -> None:
    document = json.loads((capture / "capture.json").read_text())
    assert document["kind"] == KIND and document["schema_version"] == SCHEMA_VERSION
    assert document["program"] == "train.py" and document["argv"] == ["3"]
    calls = document["calls"]
    assert [(c["function"], c["compile"]) for c in calls] == [("step", 1), ("step", 2)]
    second = calls[1]["call"]
    assert second["args"][1]["leaves"] == [{"array": {"shape": [5, 4], "dtype": "float32", "weak_type": False},
                                           "path": ""}]
    assert "training" not in second["kwargs"]  # the program passed it by default: not part of the call


def test_trace_and_bench_replay_a_saved_compile_without_running_the_program(capture: Path) -> None:
    traced = jitscope("trace", "train.py:step", "--from", str(capture), "--compile", "2", "-f", "json",
                      "--stages", "jaxpr")
    assert traced.returncode == 0, traced.stderr
    seen = {a["path"]: a["shape"] for a in json.loads(traced.stdout)["traces"][0]["seen"]}
    assert seen == {"w": [4, 3], "x": [5, 4]}
    benched = jitscope("bench", "train.py:step", "--from", str(capture), "--budget", "0.05", "-f", "json")
    assert benched.returncode == 0, benched.stderr
    assert json.loads(benched.stdout)["rows"][0]["cached"]["blocked"]["median"] > 0


def test_bad_captures_and_bad_numbers_are_one_line(capture: Path, tmp_path: Path) -> None:
    out_of_range = jitscope("trace", "train.py:step", "--from", str(capture), "--compile", "3")
    assert out_of_range.returncode == 2
    assert "has 2 compile(s) of step; --compile 3 is out of range (pass --compile 1 to 2)" in out_of_range.stderr
    empty = jitscope("trace", "train.py:step", "--from", str(tmp_path))
    assert empty.returncode == 2 and "no capture in" in empty.stderr and "run --capture" in empty.stderr
    future = tmp_path / "future"
    future.mkdir()
    (future / "capture.json").write_text(json.dumps({"kind": KIND, "schema_version": "2.0", "calls": []}))
    newer = jitscope("trace", "train.py:step", "--from", str(future))
    assert newer.returncode == 2 and "schema version 2.0; this jitscope reads 1.x" in newer.stderr
    both = jitscope("trace", "train.py:step", "--from", str(capture), "--from-run")
    assert both.returncode == 2
    assert jitscope("trace", "train.py:step", "--compile", "2").returncode == 2
    with pytest.raises(UsageError, match="not a jitscope capture"):
        (tmp_path / "other.json").write_text('{"kind": "jitscope.run"}')
        read_capture(tmp_path / "other.json")


def test_an_object_the_capture_cannot_save_is_named_with_its_leaf(tmp_path: Path) -> None:
    pytest.importorskip("equinox")
    proc = jitscope("run", "--log", "none", "--capture", str(tmp_path), "eqx_step.py")
    assert proc.returncode == 0, proc.stderr
    replay = jitscope("trace", "eqx_step.py:step", "--from", str(tmp_path))
    assert replay.returncode == 2
    line = replay.stderr.strip().splitlines()[-1]
    assert line.startswith("error: argument model, leaf .final_activation, could not be saved by the capture")
    assert line.endswith("(take the real call instead: --from-run)")


def test_typed_keys_and_extended_dtypes_are_captured_and_replayed(tmp_path: Path) -> None:
    """A key<fry> argument made the observer fail ("internal error(s)"); nothing was captured (issue 29)."""
    keys = HERE.parent / "keys"
    proc = jitscope("run", "--log", "none", "--capture", str(tmp_path), "keys_step.py", cwd=keys)
    assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr
    calls = json.loads((tmp_path / "capture.json").read_text())["calls"]
    dtypes = [[leaf["array"]["dtype"] for a in c["call"]["args"] for leaf in a["leaves"]] for c in calls]
    assert dtypes == [["key<fry>", "float32"], ["key<urbg>", "float32"],
                      ["key<rbg>", "float0", "bfloat16", "float8_e4m3fn", "int4"]]
    traced = jitscope("trace", "keys_step.py:step", "--from", str(tmp_path), "--compile", "2", "-f", "json",
                      "--stages", "jaxpr", cwd=keys)
    assert traced.returncode == 0, traced.stderr
    assert [(a["dtype"], a["shape"]) for a in json.loads(traced.stdout)["traces"][0]["seen"]] == [
        ("key<urbg>", []), ("f32", [4, 3])]
    benched = jitscope("bench", "keys_step.py:mixed", "--from", str(tmp_path), "--budget", "0.02",
                       "-f", "json", cwd=keys)
    assert benched.returncode == 0, benched.stderr
    assert json.loads(benched.stdout)["rows"][0]["call"].startswith("key<rbg>[3], float0[2], bf16[4]")


def test_a_tampered_capture_is_one_line_naming_the_file_and_the_field(capture: Path, tmp_path: Path) -> None:
    """Every field of a real capture set to null, the wrong type, Infinity, 10**400 or nested 100,000 deep (issue
    30): read and rebuilt, or one UsageError; never another exception."""
    from jitscope.run.signature import rebuild_argset
    from tests.faults.test_tampered_documents import variants

    document = json.loads((capture / "capture.json").read_text())
    path = tmp_path / "capture.json"
    refused = 0
    for change, text in variants(document):
        path.write_text(text)
        try:
            for saved in read_capture(path):
                rebuild_argset(saved, ("w", "x"), None)
        except UsageError as exc:
            refused += 1
            assert "\n" not in exc.one_line(), (change, exc)
            if change.startswith("calls") and "capture" in exc.message and str(path) in exc.message:
                assert change.split(" = ")[0].split(".")[0] in exc.message, (change, exc)
    assert refused > 20
