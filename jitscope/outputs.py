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

What is at the destination decides how it is written (issue 30): a symbolic link is followed and
the file it names is replaced (the link stays a link, as editors and git do); a FIFO or a
character device (``/dev/null``, ``/dev/stdout``, a pipe) is written to as a stream, never renamed
over; a FIFO nobody reads, a block device or a socket is refused. A path ending in ``/`` names a
folder and is refused as a file's name. A file with more than one hard link (``lint --fix`` on a
linked checkout) is written in place, so that every link sees the new text: the new text is first
written whole beside it (so a full disk fails before the file is touched), and a write into the file
that still fails part-way puts the old bytes back.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from jitscope.errors import JitscopeError
from jitscope.inputs import file_kind

#: The working directory when jitscope started (see the module docstring).
START_DIR = os.getcwd()


class OutputError(JitscopeError):
    """An output file or folder could not be written; whatever was there before is unchanged."""


def output_path(path: str | os.PathLike[str]) -> Path:
    """``path`` made absolute against the directory jitscope started in."""
    return Path(os.path.join(START_DIR, os.fspath(path)))


def _failed(path: Path, exc: OSError, *, stream: bool = False) -> OutputError:
    reason = exc.strerror or type(exc).__name__
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        reason = "a part of that path is a file, not a folder"
    if stream:
        return OutputError(f"cannot write {path}: {reason}", hint="it is a stream, not a file: what reached it "
                           "before the error stays there; name a regular file")
    return OutputError(f"cannot write {path}: {reason}",
                       hint="check the path and its permissions, the free space and the file-size limit; "
                            "the previous file, if any, is unchanged")


def check_file_name(path: str | os.PathLike[str]) -> None:
    """Refuse a file's name that ends in ``/``: it names a folder (``--save foo.json/``)."""
    text = os.fspath(path)
    if text.endswith(("/", os.sep)) and text.rstrip("/" + os.sep):
        raise OutputError(f"cannot write {text}: a path ending in / names a folder, not a file",
                          hint=f"name the file without the trailing slash: {text.rstrip('/' + os.sep)}")


#: The destinations that are no regular file but are written to, as a stream.
_STREAMS = (stat.S_ISFIFO, stat.S_ISCHR)


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` all at once; returns the absolute path written.

    A symbolic link is written through (the file it names is replaced); a FIFO or a character device
    is written to as a stream (see the module docstring).
    """
    import tempfile  # here, not at import: the CLI imports this module at start-up (~8 ms)

    check_file_name(path)
    target = output_path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if os.path.islink(target):
        target = Path(os.path.realpath(target))  # replace what the link names; the link stays
    try:
        st = os.stat(target)
        mode, links = st.st_mode, st.st_nlink
    except OSError:
        mode, links = None, 1  # not there yet (or unreadable: creating the temporary file says why)
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        _write_stream(target, payload, mode)
        return target
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
        if mode is not None and stat.S_ISREG(mode) and links > 1:
            _write_in_place(target, payload)  # the other links see it too (a rename would leave them the old)
            os.unlink(temporary)
        else:
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


def _write_stream(target: Path, payload: bytes, mode: int) -> None:
    """Write into a FIFO or a character device as ``>`` would, never replacing it; refuse anything else."""
    what = file_kind(mode)
    if not any(test(mode) for test in _STREAMS):
        raise OutputError(f"cannot write {target}: it is {what}, which jitscope does not write to",
                          hint="name a regular file, a FIFO with a reader, or a character device such as /dev/null")
    flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)  # without blocking: a FIFO nobody reads fails here (ENXIO)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OutputError(f"cannot write {target}: it is a FIFO that nobody is reading",
                              hint="start its reader first, or name a regular file") from None
        raise _failed(target, exc, stream=True) from None
    try:
        opened = os.fstat(fd).st_mode
        if not any(test(opened) for test in _STREAMS):  # replaced since the stat above
            raise OutputError(f"cannot write {target}: it changed while jitscope opened it",
                              hint="write the report again")
        os.set_blocking(fd, True)  # a reader that is slower than jitscope is waited for
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise _failed(target, exc, stream=True) from None
    finally:
        os.close(fd)


def _write_in_place(target: Path, payload: bytes) -> None:
    """Overwrite the regular file ``target`` itself (its inode: every hard link) with ``payload``; a write that
    fails part-way puts its old bytes back before the error is raised."""
    fd = os.open(target, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    try:
        old = b""
        while chunk := os.read(fd, 1 << 20):
            old += chunk
        try:
            _overwrite(fd, payload)
        except OSError:
            with contextlib.suppress(OSError):
                _overwrite(fd, old)
            raise
    finally:
        os.close(fd)


def _overwrite(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.pwrite(fd, view, len(payload) - len(view)):]
    os.ftruncate(fd, len(payload))
    os.fsync(fd)


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
    if target.is_symlink():  # a link to the folder: replace the folder it names, beside it; the link stays
        target = Path(os.path.realpath(target))
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
