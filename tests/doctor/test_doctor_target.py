"""``jitscope doctor module:fn`` (``jitscope/doctor/target.py``): one function with its examples, ``--shapes``
or ``--from-run``; bad input refused in one line, as ``trace`` refuses it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TARGETS = Path(__file__).resolve().parents[1] / "targets" / "doctor"
PARAMS = "{'w1': f32[512,1024], 'w2': f32[1024,512]}, f32[64,512]"


def jitscope(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "jitscope", *args], capture_output=True, text=True,
                          env=env, cwd=TARGETS, timeout=300, check=False)


def test_a_target_from_shapes_gets_bench_times_and_its_memory_finding() -> None:
    proc = jitscope("doctor", "--format", "json", "--shapes", PARAMS, "targets.py:step")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)  # a target's report is on stdout, as trace's
    [call] = document["calls"]
    assert call["call"] == PARAMS and 0 < call["compile_s"] < call["first_call_s"] and call["cached_s"] > 0
    [found] = document["memory"]
    assert found["kind"] == "missing-donation" and found["gain"] == "measured" and found["gain_bytes"] > 1 << 20
    # its hottest device line, with the profile command for the same target
    [hot] = document["device"]
    assert hot["kind"] == "hot-line" and hot["per_call_s"] > 0 and hot["location"]["file"].endswith("targets.py")
    assert hot["change"].startswith("jitscope profile targets.py:step shows every line")
    # no call site to read: the change says when it applies
    assert found["change"].startswith("if the caller replaces params with the result (params = step(params, ...))")


def test_a_target_that_donates_has_no_memory_finding() -> None:
    proc = jitscope("doctor", "--format", "json", "--shapes", PARAMS, "targets.py:donated_step")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["memory"] == []


def test_a_target_from_its_examples_gets_its_static_recompiles_measured() -> None:
    proc = jitscope("doctor", "--format", "json", "targets.py:scaled")  # JITSCOPE_EXAMPLES: scale 0.5, 1.5, 2.5
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert len(document["calls"]) == 3
    [found] = document["findings"]
    assert (found["kind"], found["arguments"], found["count"]) == ("recompile-static-value", ["scale"], 2)
    assert found["location"]["line"] == 28 and found["gain"] == "measured"
    assert "makes 1 compile where the run made 3" in found["gain_note"]


@pytest.mark.parametrize("args", [("targets.py:nope",), ("--shapes", "f32[", "targets.py:step"),
                                  ("clean.py:step",)])
def test_bad_targets_are_refused_in_one_line_as_trace_refuses_them(args: tuple[str, ...]) -> None:
    proc, trace = jitscope("doctor", *args), jitscope("trace", *args)
    assert proc.returncode == trace.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[0] == trace.stderr.splitlines()[0]
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("args", "what"), [
    (("targets.py:step", "--shapes", "f32[3]"), "error: --shapes after the target: doctor's options go before it"),
    (("--shapes", "f32[3]", "clean.py"), "error: --shapes describes a target's call: name a target MODULE:FN"),
    (("--from-run", "-m", "json", "targets.py:step"), "error: -m runs a program; a target is named alone"),
])
def test_target_options_and_programs_do_not_mix(args: tuple[str, ...], what: str) -> None:
    proc = jitscope("doctor", *args)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith(what), proc.stderr


def test_the_python_api_doctors_a_target_and_stays_a_function(monkeypatch: pytest.MonkeyPatch) -> None:
    import jitscope
    from jitscope.doctor import target

    monkeypatch.setattr(target, "SLOW_COMPILE_S", 0.0)  # every compile "dominates": opened by line
    result = jitscope.doctor(f"{TARGETS / 'targets.py'}:scaled")
    kinds = [f.kind for f in result.findings]
    assert sorted(kinds) == ["recompile-static-value", "slow-compile"]
    slow = result.findings[kinds.index("slow-compile")]
    assert slow.location is not None and slow.location.file.endswith("targets.py") and slow.evidence
    assert callable(jitscope.doctor) and jitscope.doctor.__name__ == "doctor"  # not the package, on a 2nd call


def test_a_target_from_run_is_doctored_on_the_call_the_program_made() -> None:
    proc = jitscope("doctor", "--format", "json", "--from-run", "no_donation.py:step")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    [call] = document["calls"]
    assert call["call"] == PARAMS
    assert [f["kind"] for f in document["memory"]] == ["missing-donation"]


def test_a_target_whose_code_fails_says_so_and_exits_1() -> None:
    proc = jitscope("doctor", "targets.py:broken")
    assert proc.returncode == 1, proc.stderr
    text = " ".join(proc.stdout.split())  # the note wraps
    assert "targets.py:broken failed on every call:" in text
    assert "ValueError: the batch is empty (jitscope bench targets.py:broken shows the traceback)" in text
    assert "Traceback" not in proc.stdout + proc.stderr
