"""How ``--processes`` tells which process caused a failure, from the reports and logs the processes left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jitscope.errors import JitscopeError, UserCodeError
from jitscope.hosts.launch import Launched, _check

GLOO = ("m.py:f(f32[64,16]) failed on its first call: XlaRuntimeError: INTERNAL: Gloo all-reduce failed: "
        "[external/gloo/gloo/transport/tcp/pair.cc:547] Connection closed by peer [127.0.0.1]:2271")
BAD = "m.py:f(f32[64,16]) failed on its first call: ValueError: bad batch on process 1"


def launched(tmp_path: Path, index: int, returncode: int, errors: list[str] | None, log: str = "") -> Launched:
    report = tmp_path / f"bench.p{index}.json"
    if errors is not None:
        report.write_text(json.dumps({"kind": "jitscope.bench", "failures": [{"error": e} for e in errors]}))
    return Launched(index, returncode, report, log)


def test_a_collective_broken_by_the_process_that_failed_names_that_process(tmp_path: Path) -> None:
    out = [launched(tmp_path, 0, 1, [GLOO], "[Gloo] Rank 0 is connected\nerror: " + GLOO),
           launched(tmp_path, 1, 1, [BAD], "error: " + BAD)]
    with pytest.raises(UserCodeError) as caught:
        _check(out, 2)
    assert caught.value.message == ("process 0 of 2 lost its peers in a collective after process 1 had finished: "
                                    + BAD)


def test_a_process_killed_while_waiting_names_the_one_that_finished(tmp_path: Path) -> None:
    out = [launched(tmp_path, 0, -9, None, "[Gloo] Rank 0 is connected\n"), launched(tmp_path, 1, 1, [BAD], "error: " + BAD)]
    with pytest.raises(UserCodeError, match="process 0 of 2 was stopped, still waiting .* after process 1 had finished"):
        _check(out, 2)


def test_every_process_failing_on_its_own_is_left_to_the_merge(tmp_path: Path) -> None:
    out = [launched(tmp_path, 0, 1, [BAD]), launched(tmp_path, 1, 1, [BAD])]
    _check(out, 2)  # both reports stand: the merged report says the call failed on p0, p1
    lost = [launched(tmp_path, 0, 1, [GLOO]), launched(tmp_path, 1, 1, [GLOO])]
    _check(lost, 2)  # no process to blame: each report says what it saw


def test_a_process_that_left_no_report_is_one_line(tmp_path: Path) -> None:
    out = [launched(tmp_path, 0, 0, []), launched(tmp_path, 1, 3, None, "Fatal Python error: Aborted\n")]
    with pytest.raises(JitscopeError, match="process 1 of 2 exited 3 without a report: Fatal Python error: Aborted"):
        _check(out, 2)
