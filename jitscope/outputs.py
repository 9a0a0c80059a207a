"""Every file jitscope writes, written whole or not at all.

A report, a saved baseline, a capture or a folder of stage files is first written beside its
destination (a temporary name in the same folder, so the final step is a rename on one file
system), flushed and fsynced, then renamed over the destination. A write that fails part-way (a
full disk, a file-size limit, a read-only folder) leaves the previous file exactly as it was and
is one line, ``cannot write base.json: No space left on device``, exit 2. A folder of files is
built under a temporary name and swapped in whole, so it never mixes old and new files.

Output paths are resolved against the directory jitscope started in (``START_DIR``, read when
this module is first imported, which the CLI does before any user code runs): user code that
calls ``os.chdir`` while it is traced or run cannot send a relative ``--out`` elsewhere.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from jitscope.errors import JitscopeError

#: The working directory when jitscope started (see the module docstring).
START_DIR = os.getcwd()


class OutputError(JitscopeError):
    """An output file or folder could not be written; whatever was there before is unchanged."""


def output_path(path: str | os.PathLike[str]) -> Path:
    """``path`` made absolute against the directory jitscope started in."""
    return Path(os.path.join(START_DIR, os.fspath(path)))


def _failed(path: Path, exc: OSError) -> OutputError:
    reason = exc.strerror or type(exc).__name__
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        reason = "a part of that path is a file, not a folder"
    return OutputError(f"cannot write {path}: {reason}",
                       hint="check the path and its permissions, the free space and the file-size limit; "
                            "the previous file, if any, is unchanged")


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` all at once; returns the absolute path written."""
    import tempfile  # here, not at import: the CLI imports this module at start-up (~8 ms)

    target = output_path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _failed(target, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        _keep_mode(target, temporary)
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise _failed(target, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


def _keep_mode(target: Path, temporary: str) -> None:
    """A replaced file keeps its permissions; a new one gets the usual ones (mkstemp makes it 0600)."""
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    os.chmod(temporary, mode)


@contextlib.contextmanager
def replaced_folder(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield an empty folder to fill; when the block ends without error it replaces ``path`` whole.

    On any error the new folder is removed and ``path`` is left as it was. Files in ``path`` that the
    block did not write are not carried over: the folder is the block's output, all of it.
    """
    import shutil
    import tempfile

    target = output_path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        _SCRATCH.add(str(building))
    except OSError as exc:
        raise _failed(target, exc) from None
    try:
        yield building
        for file in building.rglob("*"):
            if file.is_file():
                with open(file, "rb") as handle:
                    os.fsync(handle.fileno())
        os.chmod(building, 0o777 & ~_umask())
        old = None
        if target.exists():
            if not target.is_dir():
                raise OutputError(f"cannot write {target}: it is a file, not a folder",
                                  hint="name a folder (it is created), or a report file such as report.html")
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
        try:
            os.replace(building, target)
        except OSError:
            if old is not None:
                os.replace(old, target)  # put the previous folder back
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(building, ignore_errors=True)
        raise _failed(target, exc) from None
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    finally:
        _SCRATCH.discard(str(building))


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


#: Scratch folders in use (a profile capture, a cold process's files, a folder being built): removed on
#: the way out, and by ``remove_scratch`` when Ctrl-C ends the process without unwinding.
_SCRATCH: set[str] = set()


@contextlib.contextmanager
def scratch_folder(prefix: str, where: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """A new temporary folder for the block, always removed: when the block ends, and on Ctrl-C too."""
    import shutil
    import tempfile

    directory = tempfile.mkdtemp(prefix=prefix, dir=where)
    _SCRATCH.add(directory)
    try:
        yield Path(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        _SCRATCH.discard(directory)


def remove_scratch() -> None:
    """Remove every scratch folder still in use (the process is about to end without unwinding)."""
    import shutil

    for directory in list(_SCRATCH):
        shutil.rmtree(directory, ignore_errors=True)
        _SCRATCH.discard(directory)
