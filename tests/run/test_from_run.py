"""``trace|bench|profile TARGET --from-run``: the arguments of a real call, taken from the running program."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TARGETS = Path(__file__).resolve().parents[1] / "targets"
TRAIN = TARGETS / "from_run" / "train.py"
ORACLE = TARGETS / "run_oracle"


def jitscope(*args: str, cwd: Path = TRAIN.parent, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "jitscope", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout, check=False)


def arguments(report: dict) -> dict[str, tuple[str, list[int] | None]]:
    """trace's JSON: each argument leaf as the function saw it (kind, shape)."""
    return {a["path"]: (a["kind"], a.get("shape")) for a in report["traces"][0]["seen"]}


def test_trace_takes_the_nth_call_and_stops_the_program_there() -> None:
    proc = jitscope("trace", "train.py:step", "--from-run", "--call", "3", "-f", "json", "--stages", "jaxpr")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    seen = arguments(report)
    assert seen["x"] == ("traced", [5, 4]) and seen["w"] == ("traced", [4, 3])  # the ragged third call
    assert "step 2 done" in proc.stderr and "step 3 done" not in proc.stderr  # the program's prints: stderr
    assert "finished" not in proc.stderr
    assert report["traces"][0]["jaxpr"] is not None and report["traces"][0]["diagnostic"] is None


def test_program_arguments_after_the_double_dash_and_continue_lets_it_finish() -> None:
    proc = jitscope("bench", "train.py:step", "--from-run", "--call", "2", "--continue", "--budget", "0.05",
                    "-f", "json", "--", "4")
    assert proc.returncode == 0, proc.stderr
    assert "step 4 done" in proc.stderr and "finished" in proc.stderr  # ran to its end with argv ['train.py', '4']
    row = json.loads(proc.stdout)["rows"][0]
    # the captured call's w was donated by the program's own call: bench times a copy, so nothing is deleted
    assert row["cached"]["blocked"]["median"] > 0 and any("donated" in w for w in row["warnings"])


def test_never_called_call_past_the_end_and_a_crash_before_the_call_are_one_line_each() -> None:
    never = jitscope("trace", "train.py:step", "--from-run", "--", "0")
    assert never.returncode == 1
    assert never.stderr.strip().splitlines()[-1].startswith("error: train.py:step was never called")
    past = jitscope("trace", "train.py:step", "--from-run", "--call", "9")
    assert past.returncode == 1 and "was called 3 times" in past.stderr and "--call 3 or less" in past.stderr
    crash = jitscope("trace", "train.py:step", "--from-run", "--", "--crash")
    assert crash.returncode == 1
    assert "RuntimeError: the data is missing" in crash.stderr  # the program's traceback, as Python shows it
    assert "error: the program raised RuntimeError (exit 1) before it called train.py:step" in crash.stderr
    assert "jitscope/" not in crash.stderr.split("Traceback")[-1].split("RuntimeError")[0]


def test_bad_combinations_are_usage_errors() -> None:
    assert jitscope("trace", "train.py:step", "--call", "2").returncode == 2
    mixed = jitscope("trace", "train.py:step", "--from-run", "--shapes", "f32[4,3], f32[8,4]")
    assert mixed.returncode == 2 and "--from-run takes the arguments from the program" in mixed.stderr
    star = jitscope("trace", "train.py:*", "--from-run")
    assert star.returncode == 2


def test_a_thread_the_program_leaves_blocked_does_not_hang_jitscope() -> None:
    proc = jitscope("trace", "stuck_loader.py:step", "--from-run", "--call", "2", "--stages", "jaxpr",
                    timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "stuck_loader.py:step" in proc.stdout


@pytest.mark.models
@pytest.mark.parametrize(("program", "function", "libraries"), [
    ("linen_trainstate", "step", ("flax", "optax")),
    ("nnx_optimizer", "train_step", ("flax", "optax")),
    ("equinox_filter_jit", "step", ("equinox", "optax")),
    ("haiku_transform", "update", ("haiku", "optax")),
])
def test_real_training_steps_from_the_running_program(program: str, function: str,
                                                      libraries: tuple[str, ...]) -> None:
    """A model object and an optimizer state as arguments: trace and bench take them as the program passed them."""
    for library in libraries:
        pytest.importorskip(library)
    target = f"{program}.py:{function}"
    traced = jitscope("trace", target, "--from-run", "-f", "json", "--stages", "jaxpr,hlo", cwd=ORACLE)
    assert traced.returncode == 0, traced.stderr[-2000:]
    record = json.loads(traced.stdout)["traces"][0]
    assert record["diagnostic"] is None and record["jaxpr"] is not None
    # "your code" is the program's folder: the step's equations are placed on its own lines
    assert record["source_roots"] == ["."]
    mine = [line for line in record["source_lines"] if line["location"] is not None]
    assert mine and all(line["location"]["file"] == f"{program}.py" for line in mine)
    traced_leaves = [a for a in record["seen"] if a["kind"] == "traced"]
    if program != "nnx_optimizer" or _nnx_modules_are_pytrees():
        assert len(traced_leaves) >= 4  # the model's and the optimizer's arrays are inputs, not constants
    else:  # flax < 0.11: an nnx module is no pytree, so jitscope's jit holds it static (its arrays: constants)
        assert record["summary"]["constants"]
    benched = jitscope("bench", target, "--from-run", "--budget", "0.05", "-f", "json", cwd=ORACLE)
    assert benched.returncode == 0, benched.stderr[-2000:]
    row = json.loads(benched.stdout)["rows"][0]
    assert row["cached"]["blocked"]["median"] > 0 and row["cold"]["median"]["compile"] > 0


def test_a_module_target_runs_as_python_dash_m() -> None:
    proc = jitscope("trace", "train:step", "--from-run", "--stages", "jaxpr", "-f", "json", "--", "2")
    assert proc.returncode == 0, proc.stderr
    assert arguments(json.loads(proc.stdout))["x"] == ("traced", [8, 4])
    assert "step 1 done" not in proc.stderr  # stopped at the first call


def test_the_watch_is_removed_once_the_call_is_taken() -> None:
    """After the capture nothing of jitscope's stays in the interpreter: no trace function, no monitoring tool."""
    from jitscope.run.capture import capture_call
    from jitscope.run.program import Program

    before = sys.gettrace()
    cwd = os.getcwd()
    try:
        os.chdir(TRAIN.parent)
        result = capture_call(Program("train.py", None, ("2",)), "train.py", "step", call=1)
    finally:
        os.chdir(cwd)
    assert result.call is not None and result.call.number == 1 and result.outcome.exit_code == 0
    assert sys.gettrace() is before
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        assert all(monitoring.get_tool(tool) != "jitscope-from-run" for tool in range(6))


def _nnx_modules_are_pytrees() -> bool:
    import jax
    from flax import nnx

    return len(jax.tree_util.tree_leaves(nnx.Linear(2, 2, rngs=nnx.Rngs(0)))) >= 2


def test_a_function_the_program_wraps_in_its_own_jit_is_traced_and_the_wrapper_is_named() -> None:
    """``f = jax.jit(step)``: the trap on ``step`` must stay hashable (jit hashes it), its first call is
    taken while ``f`` traces, and a later call, which ``f``'s cache answers without reaching ``step``,
    is one line naming ``f``, which is what to capture instead."""
    first = jitscope("trace", "own_jit.py:step", "--from-run", "-f", "json", "--stages", "jaxpr")
    assert first.returncode == 0, first.stderr
    assert arguments(json.loads(first.stdout))["x"] == ("traced", [4])
    later = jitscope("trace", "own_jit.py:step", "--from-run", "--call", "2")
    assert later.returncode == 1
    assert later.stderr.strip().splitlines()[-1] == (
        "error: own_jit.py:step was called once before the program exited 0: the program calls it through its own "
        "wrapper `f` (a jit of it), whose cached calls never reach step (name the wrapper instead: own_jit.py:f)")
    wrapper = jitscope("trace", "own_jit.py:f", "--from-run", "--call", "3", "-f", "json", "--stages", "jaxpr")
    assert wrapper.returncode == 0, wrapper.stderr
