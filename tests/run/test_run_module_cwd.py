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
