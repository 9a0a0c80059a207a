"""Ctrl-C ends every command with exit 130, wherever it lands (issue 25; it was once lost in JAX's GC callback).

The timeout only bounds a hang; the time Ctrl-C takes is not asserted (it is about a second at most
by construction: faults.exit_soon_after_interrupt).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

LONG_RUNNING = {
    "trace": ("trace", "transformer.py:encode"),
    "bench": ("bench", "mlp.py:train_step", "--budget", "60"),
    "profile": ("profile", "profile_hotspot.py:layer", "--calls", "100000"),
    # JAX's own sources: long enough to be interrupted (the examples alone lint in about a second)
    "lint": ("lint", "--trace", "static_args.py:jitted_where", "--jobs", "1", "--no-show-source",
             os.path.dirname(str(importlib.util.find_spec("jax").origin))),
}


def _interrupted(command: str, delay: float, **env: str) -> tuple[int, str]:
    """Start ``jitscope COMMAND ...``, press Ctrl-C after ``delay`` seconds: its exit code and stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "jitscope", *LONG_RUNNING[command]], cwd=EXAMPLES,
                            env={**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1", **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    if proc.poll() is not None:
        pytest.skip(f"{command} finished in under {delay} s on this machine: nothing left to interrupt")
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"jitscope {command} did not end after Ctrl-C")
    return proc.returncode, err


@pytest.mark.parametrize("delay", [0.8, 2.5])
@pytest.mark.parametrize("command", sorted(LONG_RUNNING))
def test_ctrl_c_ends_the_command_with_exit_130(command: str, delay: float) -> None:
    code, err = _interrupted(command, delay)
    assert code == 130, err[-2000:]
    assert "internal error" not in err and "Traceback" not in err


@pytest.mark.parametrize("delay", [3.0, 8.0])  # 8 s: inside the profile capture
def test_ctrl_c_leaves_no_scratch_files_behind(tmp_path: Path, delay: float) -> None:
    code, err = _interrupted("profile", delay, TMPDIR=str(tmp_path))
    assert code == 130, err[-2000:]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("jitscope-")] == []


def test_scratch_folders_are_removed_however_the_process_ends() -> None:
    from jitscope.outputs import remove_scratch, scratch_folder

    with scratch_folder("jitscope-test-") as kept:
        assert kept.is_dir()
        (kept / "capture.pb").write_bytes(b"x")
        remove_scratch()  # what Ctrl-C's end does before the process exits
        assert not kept.exists()
    with scratch_folder("jitscope-test-") as done:
        pass
    assert not done.exists()


LANDS_IN_A_GC_CALLBACK = """
import gc, os, signal, sys, time
from jitscope import faults

faults.exit_soon_after_interrupt(grace=30.0)  # the watchdog must not be what ends it
def callback(phase, info):
    if phase == "start" and not faults.INTERRUPTED.is_set():
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000):  # the handler runs here, inside the callback, like JAX's _xla_gc_callback
            pass
gc.callbacks.append(callback)
try:
    gc.collect()
    time.sleep(20)
    print("the interrupt was lost", file=sys.stderr)
except KeyboardInterrupt:
    faults.end_interrupted()
"""


def test_ctrl_c_inside_a_gc_callback_is_raised_again_not_printed() -> None:
    """Once seen in CI: Ctrl-C landed in JAX's GC callback, Python printed 'Exception ignored' and a traceback."""
    proc = subprocess.run([sys.executable, "-c", LANDS_IN_A_GC_CALLBACK], capture_output=True, text=True,
                          timeout=25, check=False)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "interrupted\n"
