"""Outputs are written whole or not at all (issue 25): a failed write leaves the previous file as it was."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from jitscope.errors import UsageError
from jitscope.outputs import OutputError, replaced_folder, write_atomic
from jitscope.report.writers.stage_files import check_stage_folder

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_write_over_the_size_limit_keeps_the_previous_file_and_says_so_in_one_line(tmp_path: Path) -> None:
    target = tmp_path / "base.json"
    target.write_text('{"good": true}\n')
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
        "from jitscope.outputs import write_atomic, OutputError\n"
        "try:\n"
        f"    write_atomic({str(target)!r}, 'x' * 5000)\n"
        "except OutputError as exc:\n"
        "    print(exc.one_line()); sys.exit(2)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout.startswith(f"cannot write {target}: File too large")
    assert target.read_text() == '{"good": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["base.json"]  # no temporary left behind


def test_a_read_only_folder_is_one_error_and_nothing_changes(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "r.json").write_text("old")
    folder.chmod(0o555)
    try:
        with pytest.raises(OutputError, match="cannot write .*r.json: Permission denied"):
            write_atomic(folder / "r.json", "new")
        assert (folder / "r.json").read_text() == "old"
    finally:
        folder.chmod(0o755)


def test_a_replaced_file_keeps_its_mode_and_relative_paths_are_from_the_start_dir(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch
                                                                                   ) -> None:
    from jitscope import outputs

    monkeypatch.setattr(outputs, "START_DIR", str(tmp_path))
    (tmp_path / "r.txt").write_text("old")
    (tmp_path / "r.txt").chmod(0o640)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # user code moved the working directory
    written = write_atomic("r.txt", "new")
    assert written == tmp_path / "r.txt" and written.read_text() == "new"
    assert (written.stat().st_mode & 0o777) == 0o640
    assert not list(elsewhere.iterdir())


def test_a_folder_is_swapped_in_whole_or_left_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "stages"
    with replaced_folder(out) as building:
        (building / "a.txt").write_text("1")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt"]
    with pytest.raises(RuntimeError), replaced_folder(out) as building:
        (building / "b.txt").write_text("2")
        raise RuntimeError("failed half-way")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt"]  # the old folder, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stages"]  # no half-built folder left


def test_a_folder_named_through_a_symlink_is_replaced_where_the_link_points(tmp_path: Path) -> None:
    """`trace --out link` (link -> real/): the output lands in real/ and the link stays a link.
    Before, the link itself was replaced by a folder and real/ was left stale."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "old.txt").write_text("0")
    link = tmp_path / "link"
    link.symlink_to(real)
    with replaced_folder(link) as building:
        (building / "a.txt").write_text("1")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert sorted(p.name for p in real.iterdir()) == ["a.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_trace_out_refuses_a_folder_holding_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("mine")
    with pytest.raises(UsageError, match="holds files jitscope did not write"):
        check_stage_folder(tmp_path)
    check_stage_folder(tmp_path / "new")  # not there yet: fine


def test_bench_save_over_a_file_size_limit_keeps_the_baseline(tmp_path: Path) -> None:
    """The issue's case: `bench --save base.json` failing part-way destroyed the previous baseline."""
    base = tmp_path / "base.json"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1"}
    command = [sys.executable, "-m", "jitscope", "bench", "jit_sin.py:fsin", "--shapes", "f32[8]", "--budget", "0.05",
               "--no-dispatch", "--save", str(base)]
    first = subprocess.run(command, capture_output=True, text=True, env=env, cwd=EXAMPLES, timeout=300, check=False)
    assert first.returncode == 0, first.stderr
    saved = base.read_text()
    json.loads(saved)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    second = subprocess.run(command, capture_output=True, text=True, env=env, cwd=EXAMPLES, timeout=300,
                            check=False, preexec_fn=limit)
    assert second.returncode == 2, second.stderr
    assert second.stderr.strip().splitlines()[-1].startswith(f"error: cannot write {base}: File too large")
    assert base.read_text() == saved


def test_a_hard_linked_file_is_written_in_place_and_a_failed_write_puts_it_back(tmp_path: Path) -> None:
    target, link = tmp_path / "base.json", tmp_path / "link.json"
    target.write_text('{"good": true}\n')
    os.link(target, link)
    write_atomic(target, '{"new": 1}\n')
    assert link.read_text() == '{"new": 1}\n' and link.stat().st_ino == target.stat().st_ino
    script = (  # over the file-size limit part-way through the write into the file itself
        "import resource, sys\n"
        "from unittest import mock\n"
        "import jitscope.outputs as o\n"
        "real = o._overwrite\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)\n"
        "def limited(fd, payload):\n"
        "    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, hard))\n"
        "    try:\n"
        "        real(fd, payload)\n"
        "    finally:\n"
        "        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))\n"
        "with mock.patch.object(o, '_overwrite', limited):\n"
        "    try:\n"
        f"        o.write_atomic({str(target)!r}, 'x' * 5000)\n"
        "    except o.OutputError as exc:\n"
        "        print(exc.one_line()); sys.exit(2)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout.startswith(f"cannot write {target}: File too large")
    assert link.read_text() == '{"new": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.json", "link.json"]
