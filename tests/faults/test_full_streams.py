"""A report that cannot be written because stdout (or stderr) is full: one line, exit 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")


def _run(*args: str, stdout: str = "/dev/null", stderr: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    with open(stdout, "w") as out, open(stderr or os.devnull, "w") as err:
        if stderr is None:
            return subprocess.run([sys.executable, "-m", "jitscope", *args], cwd=EXAMPLES, env=env, stdout=out,
                                  stderr=subprocess.PIPE, text=True, timeout=300, check=False)
        return subprocess.run([sys.executable, "-m", "jitscope", *args], cwd=EXAMPLES, env=env, stdout=out,
                              stderr=err, text=True, timeout=300, check=False)


@pytest.mark.parametrize("args", [("lint", "impure.py"), ("lint", "impure.py", "--format", "json"),
                                  ("trace", "jit_sin.py:fsin", "-s", "f32[8]", "--stages", "jaxpr")])
def test_a_full_stdout_is_one_error_line(args: tuple[str, ...]) -> None:
    proc = _run(*args, stdout="/dev/full")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: cannot write the output: No space left on device (free some space, or write it elsewhere with --out)"]


def test_a_full_stderr_keeps_the_exit_code() -> None:
    assert _run("trace", "mlp.py:nope", stderr="/dev/full").returncode == 2  # the target error, unreadable
    assert _run("lint", "impure.py", stdout="/dev/full", stderr="/dev/full").returncode == 2
