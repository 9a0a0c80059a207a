"""Numbers that decide how long a command runs, or how big an array is, are bounded (issue 25)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jitscope.errors import SpecError
from jitscope.load.specs import parse_shapes

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def jitscope(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "jitscope", *args], capture_output=True, text=True, env=env,
                          cwd=EXAMPLES, timeout=120, check=False)


@pytest.mark.parametrize(("command", "message"), [
    (("bench", "jit_sin.py:fsin", "-s", "f32[8]", "--budget", "inf"), "--budget inf is out of range"),
    (("bench", "jit_sin.py:fsin", "-s", "f32[8]", "--budget", "nan"), "--budget nan is out of range"),
    (("bench", "jit_sin.py:fsin", "-s", "f32[8]", "--budget", "1e9"), "--budget 1e+09 is out of range"),
    (("bench", "jit_sin.py:fsin", "-s", "f32[8]", "--max-warmup", "inf"), "--max-warmup inf is out of range"),
    (("profile", "jit_sin.py:fsin", "-s", "f32[8]", "--calls", "100000000"), "--calls 100000000 is out of range"),
    (("trace", "jit_sin.py:fsin", "-s", "f32[8]", "--devices", "100000"),
     "100,000 devices asked for (--devices/--mesh): at most 1,024 virtual CPU devices"),
    (("trace", "jit_sin.py:fsin", "-s", "f32[8]", "--mesh", "data=100000"),
     "100,000 devices asked for (--devices/--mesh)"),
])
def test_out_of_range_numbers_are_one_line_and_exit_2(command: tuple[str, ...], message: str) -> None:
    proc = jitscope(*command)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


@pytest.mark.parametrize("text", ["f32[9223372036854775807]", "f32[99999999999999999999999999]",
                                  "f32[2305843009213693952]", "f32[1024,1024,1024,1024,1024,1024,1024]"])
def test_shapes_past_what_xla_can_size_are_refused_at_parse_time_with_the_column(text: str) -> None:
    with pytest.raises(SpecError, match="2\\*\\*62 bytes or more") as caught:
        parse_shapes(text)
    assert "^" in (caught.value.detail or caught.value.message) or "column" in caught.value.message


def test_the_biggest_sizable_array_still_traces_abstractly() -> None:
    proc = jitscope("trace", "jit_sin.py:fsin", "-s", "f32[1152921504606846975]", "--stages", "jaxpr,hlo")
    assert proc.returncode == 0, proc.stderr  # 2**62 - 4 bytes: the last size under the cap
    assert "f32[1152921504606846975]" in proc.stdout


def test_a_target_that_is_neither_a_module_nor_a_path_is_a_usage_error() -> None:
    proc = jitscope("trace", ".:f", "-s", "f32[8]")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: '.' is neither a module name nor a path to a .py file")


def test_a_persistent_cache_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    proc = jitscope("bench", "jit_sin.py:fsin", "-s", "f32[8]", "--budget", "0.05", "--persistent-cache",
                    str(blocker))
    assert proc.returncode == 2
    expected = f"error: --persistent-cache {blocker} is a file (name a folder (it is created), or 'off')"
    assert proc.stderr.strip().splitlines() == [expected]

