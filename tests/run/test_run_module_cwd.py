"""``jitscope run -m`` finds modules where ``python -m`` does: in the current directory."""

from __future__ import annotations

import sys

import pytest

from jitscope.cli.app import main


def test_module_importable_only_from_the_current_directory(tmp_path, capsys, monkeypatch):
    # `python -m pkg.mod` works from the folder that holds `pkg/` (a namespace package here),
    # without that folder being on sys.path beforehand: the check before running must agree.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("import sys\nprint('ran', __name__, sys.argv[1:])\n")
    monkeypatch.chdir(tmp_path)
    assert str(tmp_path) not in sys.path
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--log", "none", "-m", "pkg.mod", "x"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0, err
    assert out == "ran __main__ ['x']\n"
    assert str(tmp_path) not in sys.path  # restored afterwards


DELETED_CWD = """
import os, tempfile
import jax, jax.numpy as jnp

@jax.jit
def step(x):
    return x * 2

folder = tempfile.mkdtemp()
os.chdir(folder)
os.rmdir(folder)  # the working directory is gone: relative file names resolve nowhere
step(jnp.ones(3))
step(jnp.ones(4))
"""


def test_a_program_that_removes_its_working_directory_keeps_its_function_names(tmp_path):
    """Run as ``jitscope run prog.py`` (a relative path): its compiles are still ``step``'s, at prog.py."""
    import json
    import subprocess

    (tmp_path / "prog.py").write_text(DELETED_CWD)
    proc = subprocess.run([sys.executable, "-m", "jitscope", "run", "--log", "none", "--format", "json", "prog.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stderr[proc.stderr.index("{"):])
    assert [(f["function"], f["compiles"], f["defined_at"]["file"]) for f in report["functions"]
            if f["kind"] == "jit"] == [("step", 2, "prog.py")]
    assert all(event["function"] for event in report["events"])
    assert "internal error" not in proc.stderr
