"""Special files as outputs and inputs (issue 30): never replaced, never waited on, always one line.

Every output option writes through ``outputs.write_atomic``: a FIFO or a character device is written to as a
stream (a FIFO nobody reads is refused), a symbolic link is written through, a name ending in ``/`` is refused.
Every file the user names as an input is read by ``inputs.read_input``: anything that is not a regular file is
refused before it is read. Whatever could block runs in a subprocess with a timeout, so a regression fails
instead of hanging the suite. The device nodes are made here (as root) in a temporary folder: the machine's own
``/dev`` is never named as an output.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from jitscope.outputs import OutputError, write_atomic
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"
#: A command that would block on a FIFO fails the test after this long instead of hanging it.
TIMEOUT_S = 60


def jitscope(*args: str, cwd: Path = EXAMPLES) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "jitscope", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=TIMEOUT_S, check=False)


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return errors[0]


def python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=TIMEOUT_S,
                          check=False)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


def device(tmp_path: Path, kind: int, major: int, minor: int) -> Path:
    """A device node of our own (root only): replacing it would harm nothing but this test."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    path = tmp_path / f"dev{major}_{minor}"
    os.mknod(path, kind | 0o600, os.makedev(major, minor))
    return path


# -- outputs -------------------------------------------------------------------------------------------------


def test_a_fifo_with_a_reader_gets_the_report_as_a_stream_and_stays_a_fifo(fifo: Path) -> None:
    received: list[bytes] = []
    read_end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the reader is there before jitscope writes
    os.set_blocking(read_end, True)
    held_open = os.open(fifo, os.O_WRONLY)  # the reader sees no end of file before jitscope has written

    def read_all() -> None:
        with open(read_end, "rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    payload = "x" * 200_000  # more than a pipe holds: the writer waits for the reader
    write_atomic(fifo, payload)
    os.close(held_open)
    reader.join(TIMEOUT_S)
    assert received == [payload.encode()]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_fifo_nobody_reads_is_refused_at_once_and_stays_a_fifo(fifo: Path) -> None:
    proc = python("from jitscope.outputs import write_atomic, OutputError\n"
                  f"try:\n    write_atomic({str(fifo)!r}, 'report')\n"
                  "except OutputError as exc:\n    print(exc.one_line())\n")
    assert proc.stdout.startswith(f"cannot write {fifo}: it is a FIFO that nobody is reading"), proc.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_character_device_is_written_as_a_stream_never_replaced(tmp_path: Path) -> None:
    null = device(tmp_path, stat.S_IFCHR, 1, 3)  # what /dev/null is
    assert write_atomic(null, "report") == null
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == [null.name]  # no temporary left beside it


def test_a_full_character_device_is_one_error_and_stays_a_device(tmp_path: Path) -> None:
    full = device(tmp_path, stat.S_IFCHR, 1, 7)  # what /dev/full is: every write fails with ENOSPC
    with pytest.raises(OutputError, match="No space left on device"):
        write_atomic(full, "report")
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_a_block_device_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    disk = device(tmp_path, stat.S_IFBLK, 7, 250)  # a loop device number no test machine uses
    with pytest.raises(OutputError, match="it is a block device, which jitscope does not write to"):
        write_atomic(disk, "report")
    assert stat.S_ISBLK(os.stat(disk).st_mode)


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "base.json"
    target.write_text("old")
    link = tmp_path / "base.json"
    link.symlink_to(Path("real") / "base.json")
    write_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(Path("real") / "base.json")
    assert target.read_text() == "new"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["base.json"]


def test_a_name_ending_in_a_slash_is_refused_as_a_file(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="a path ending in / names a folder, not a file"):
        write_atomic(f"{tmp_path}/base.json/", "new")
    assert not list(tmp_path.iterdir())


def test_save_with_a_trailing_slash_is_refused_before_anything_runs(tmp_path: Path) -> None:
    proc = jitscope("bench", "jit_sin.py:fsin", "-s", "f32[8]", "--save", f"{tmp_path}/base.json/")
    line = one_error(proc)
    assert line.startswith(f"error: cannot write {tmp_path}/base.json/: a path ending in / names a folder")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("command", [
    ("bench", "jit_sin.py:fsin", "-s", "f32[8]", "--budget", "0.02", "--no-dispatch", "--save"),
    ("memory", "jit_sin.py:fsin", "-s", "f32[8]", "--out"),
    ("lint", "jit_sin.py", "--out"),
    ("run", "--out"),
])
def test_every_output_option_refuses_a_fifo_nobody_reads_and_leaves_it(command: tuple[str, ...],
                                                                        fifo: Path) -> None:
    args = (*command, str(fifo), "jit_sin.py") if command[0] == "run" else (*command, str(fifo))
    line = one_error(jitscope(*args))
    assert line.startswith(f"error: cannot write {fifo}: it is a FIFO that nobody is reading")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


# -- inputs --------------------------------------------------------------------------------------------------


def test_read_input_refuses_what_is_not_a_regular_file_without_blocking(fifo: Path, tmp_path: Path) -> None:
    proc = python("import sys\nfrom jitscope.errors import UsageError\nfrom jitscope.inputs import read_input\n"
                  f"for path in ({str(fifo)!r}, '/dev/zero', {str(tmp_path)!r}):\n"
                  "    try:\n        read_input(path, 'baseline')\n"
                  "    except UsageError as exc:\n        print(exc.message)\n")
    assert proc.stdout.splitlines() == [
        f"baseline {fifo} is a FIFO, not a regular file: jitscope did not read it",
        "baseline /dev/zero is a character device, not a regular file: jitscope did not read it",
        f"baseline {tmp_path} is a directory, not a regular file: jitscope did not read it",
    ], proc.stderr


def test_read_input_bounds_what_it_reads(tmp_path: Path) -> None:
    from jitscope.errors import UsageError
    from jitscope.inputs import read_input

    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2000)
    assert read_input(big, "report", limit=2000) == b" " * 2000
    with pytest.raises(UsageError, match="report .*big.json is larger than 1,000 bytes"):
        read_input(big, "report", limit=1000)
    link = tmp_path / "gone.json"
    link.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(UsageError, match="cannot read report .*gone.json: no such file \\(a broken symbolic link\\)"):
        read_input(link, "report")


def test_bench_compare_with_a_fifo_is_one_line(fifo: Path) -> None:
    line = one_error(jitscope("bench", "jit_sin.py:fsin", "-s", "f32[8]", "--budget", "0.02", "--no-dispatch",
                              "--compare", str(fifo)))
    assert f"baseline {fifo} is a FIFO, not a regular file" in line


def test_a_capture_file_that_is_a_fifo_is_one_line(tmp_path: Path) -> None:
    from jitscope.run.signature import FILE

    os.mkfifo(tmp_path / FILE)
    line = one_error(jitscope("trace", "jit_sin.py:fsin", "--from", str(tmp_path)))
    assert f"capture {tmp_path / FILE} is a FIFO, not a regular file" in line


def test_merge_of_a_fifo_or_a_device_is_one_line(fifo: Path) -> None:
    assert f"report {fifo} is a FIFO, not a regular file" in one_error(jitscope("merge", str(fifo)))
    assert "report /dev/zero is a character device" in one_error(jitscope("merge", "/dev/zero"))


@pytest.mark.parametrize(("script", "kind"), [("/dev/null", "a character device"), ("fifo", "a FIFO")])
def test_run_names_what_a_script_that_is_no_file_is(script: str, kind: str, fifo: Path) -> None:
    path = str(fifo) if script == "fifo" else script
    line = one_error(jitscope("run", path))
    assert line.startswith(f"error: cannot run {path}: it is {kind}, not a Python script")


def test_merge_bounds_what_a_kept_program_unpacks_to(tmp_path: Path) -> None:
    """A tampered report whose kept HLO inflates past the bound (to 1 GiB in the issue; 32 MiB here, which is as
    far past it and quick to make) is refused, naming the field and the file, before it is unpacked whole."""
    import base64
    import zlib

    from tests.hosts.test_hosts_bad_input import record, write

    bomb = base64.b64encode(zlib.compress(b"a" * 2**25, 1)).decode()
    a = write(tmp_path / "run.p0.json", record(0))
    tampered = json.loads(Path(write(tmp_path / "run.p1.json", record(1))).read_text())
    tampered["events"][0]["program"]["hlo_zlib"] = bomb
    b = write(tmp_path / "run.p1.json", tampered)
    line = one_error(jitscope("merge", a, b, cwd=tmp_path))
    assert line.startswith(f"error: {b}: events[0].program.hlo_zlib unpacks to more than 8,000,000 bytes")


def test_a_target_file_that_is_a_fifo_is_named_for_what_it_is(fifo: Path) -> None:
    target = fifo.with_name("model.py")
    os.rename(fifo, target)
    line = one_error(jitscope("trace", f"{target}:f", "-s", "f32[2]"))
    assert line == f"error: cannot import {target}: it is a FIFO, not a Python file (name a .py file)"


def test_trace_out_names_a_fifo_for_what_it_is(fifo: Path) -> None:
    from jitscope.errors import UsageError
    from jitscope.report.writers.stage_files import check_stage_folder

    with pytest.raises(UsageError, match=f"--out {fifo} is a FIFO"):
        check_stage_folder(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_merge_calls_a_truncated_report_damaged_not_missing(tmp_path: Path) -> None:
    from tests.hosts.test_hosts_bad_input import record, write

    write(tmp_path / "run.p0.json", record(0))
    whole = json.dumps(json.loads(Path(write(tmp_path / "run.p1.json", record(1))).read_text()), indent=2)
    (tmp_path / "run.p1.json").write_text(whole[: len(whole) // 2])  # a copy cut short
    line = one_error(jitscope("merge", str(tmp_path), cwd=tmp_path))
    assert line.startswith(f"error: {tmp_path / 'run.p1.json'}: a damaged run report, not whole JSON")
