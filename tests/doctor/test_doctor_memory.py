"""Doctor's memory findings (``jitscope/doctor/memory.py``), ranked apart by bytes at the peak: a step that
replaces its parameters without donating them is found at its jit, with the gain measured by compiling again
with ``donate_argnums``; a step that donates, or a program too small to matter, gets none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jitscope.doctor.callsite import replaced_arguments
from jitscope.model.common import Location
from jitscope.model.memory import MemoryRow, Peak, RematTrial, ResidualLine, Totals

TARGETS = Path(__file__).resolve().parents[1] / "targets" / "doctor"


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "jitscope", "doctor", *args], capture_output=True, text=True,
                          env=env, cwd=TARGETS, timeout=300, check=False)


def test_a_step_that_does_not_donate_its_parameters_is_a_measured_memory_finding(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "no_donation.py")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(out.read_text())
    assert document["findings"] == []  # no time to save: the memory finding is ranked apart
    [found] = document["memory"]
    assert (found["kind"], found["location"]["line"], found["arguments"]) == ("missing-donation", 14, ["params"])
    assert found["cost_bytes"] == 4 << 20  # both 2 MiB matrices are held twice at the peak
    assert found["gain"] == "measured" and 1 << 20 < found["gain_bytes"] < found["cost_bytes"]
    assert "donate_argnums=0" in found["change"] and "(line 23)" in found["change"]
    assert "compiled again with donate_argnums=0: peak 8.38 MiB -> 6.75 MiB" in found["gain_note"]
    assert "1 memory finding" in proc.stderr and "M1. `step` returns new params" in proc.stderr


def test_a_clean_program_has_no_memory_finding(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "clean.py")  # it replaces w without donating it: 4 KiB, under the floor
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["memory"] == []
    assert "nothing to fix above the noise floor" in proc.stderr and "memory" not in proc.stderr


def test_only_arguments_the_statement_replaces_are_donation_candidates(tmp_path: Path) -> None:
    source = tmp_path / "loop.py"
    source.write_text("params, opt, loss = step(params, opt, batch)\n"
                      "new = step(params, opt, batch)\n"
                      "state.params = update(\n    state.params,\n    grads,\n)\n"
                      "print(step(params, opt, batch))\n"
                      "a = f(x) + f(y)\n")
    def at(line: int, n: int) -> set[int] | None:
        return replaced_arguments(Location(str(source), line, "<module>"), n)

    assert at(1, 3) == {0, 1}
    assert at(2, 3) == set()  # params is read again later, maybe: donating it would break the program
    assert at(4, 2) == {0}  # a call over several lines, read at any of them
    assert at(7, 3) == set()
    assert at(8, 1) is None  # two calls on the line: which one is not known
    assert replaced_arguments(Location(str(tmp_path / "gone.py"), 1, "f"), 1) is None


def _row(peak: int, trials: tuple[tuple[str, int, str], ...]) -> MemoryRow:
    where = Location("train.py", 12, "loss")
    return MemoryRow(
        target="train.py:step", call="f32[8]", function=Location("train.py", 20, "step"), last_line=25,
        module="jit_step", backend="cpu", devices=1,
        totals=Totals(arguments=0, outputs=0, aliased=0, temporaries=peak, constants=0, generated_code=None,
                      reserved=peak),
        peak=Peak(bytes=peak, position=3, steps=9, instruction="dot.1", location=where, buffers=(), on_lines=peak,
                  arguments=0, constants=0, no_source=0),
        lines=(), residuals=(ResidualLine(where, 24 << 20, 20 << 20, 6, ("sin",), "dots_saveable"),),
        remat=tuple(RematTrial(policy, p, p, error) for policy, p, error in trials))


def test_remat_is_a_finding_only_where_try_remat_measured_a_lower_peak() -> None:
    from jitscope.doctor.memory import MemoryCall, _remat

    call = MemoryCall(target=type("T", (), {"name": "train.py:step"})(), argset=None)  # type: ignore[arg-type]
    lower = _row(40 << 20, (("nothing_saveable", 30 << 20, ""), ("dots_saveable", 25 << 20, "")))
    [found] = _remat(call, lower)
    assert (found.kind, found.location.line, found.gain) == ("remat-residuals", 12, "measured")
    assert found.cost_bytes == 20 << 20 and found.gain_bytes == 15 << 20  # the better policy's peak, measured
    assert "policy=jax.checkpoint_policies.dots_saveable" in found.change
    same = _row(40 << 20, (("nothing_saveable", 40 << 20, ""), ("dots_saveable", 0, "it failed")))
    assert list(_remat(call, same)) == []  # the residual estimate alone is not a finding
    small = _row(40 << 20, (("dots_saveable", (40 << 20) - 4096, ""),))
    assert list(_remat(call, small)) == []  # under the floor (1 MiB, 5% of the peak)


def test_an_nnx_step_is_not_analysed_as_a_plain_jit(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("flax")
    pytest.importorskip("optax")
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "nnx_train.py")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(out.read_text())
    assert document["memory"] == [] and not any(n.startswith("memory:") for n in document["notes"]), document


def test_a_step_that_donates_by_name_has_no_memory_finding(tmp_path: Path) -> None:
    out = tmp_path / "doctor.json"
    proc = doctor("--out", str(out), "donated.py")  # without the user's donation, memory would find it missing
    assert proc.returncode == 0, proc.stderr
    document = json.loads(out.read_text())
    assert document["memory"] == [] and document["notes"] == []
