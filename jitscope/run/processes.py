"""``jitscope run`` in one process of a multi-process program: which process, and where its report goes.

Each process of a ``jax.distributed`` program runs its own ``jitscope run`` (``srun jitscope run
train.py``, ``torchrun ... -m jitscope run train.py``, or any launcher). Nothing is known at start:
the program initialises ``jax.distributed`` when it likes, so ``ProcessWatch`` asks JAX at every
compile until the answer is in (the first compile after ``initialize``; before it, a process
cannot compile anything that runs across processes) and once more at exit. A single-process
program is settled at its first compile with a backend up, and from then on costs nothing.

Once a run knows it is process ``i`` of ``n``: its events carry ``i``, every compile keeps a
fingerprint of the program XLA built (``run/programs.py``), ``--out run.json`` becomes
``run.pI.json`` (``--out DIR/``: ``DIR/run.pI.json``), and the report is rewritten after every
compile of the user's functions while the program runs, marked partial: a process that hangs
in a collective, or is killed by its launcher, still leaves what it compiled, which is what
``jitscope merge`` needs to say where it stopped.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from jitscope.model.run import ProcessInfo

#: Launchers' variables naming this process's rank and the number of processes, tried in order when
#: JAX never said (the program ended before it initialised jax.distributed): Slurm, torchrun, Open MPI,
#: MPICH/PMI.
LAUNCHER_VARIABLES = (("SLURM_PROCID", "SLURM_NTASKS"), ("RANK", "WORLD_SIZE"),
                      ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"))


def launcher_process(environ: dict[str, str] | os._Environ[str] | None = None) -> tuple[int, int, str] | None:
    """(index, count, variable) from the launcher's environment, when it says there are several processes."""
    env = os.environ if environ is None else environ
    for rank_name, size_name in LAUNCHER_VARIABLES:
        rank, size = env.get(rank_name, ""), env.get(size_name, "")
        if rank.isdigit() and size.isdigit() and int(size) > 1 and int(rank) < int(size):
            return int(rank), int(size), rank_name
    return None


class ProcessWatch:
    """The process this run is, found lazily; ``info`` is None while unknown and for a single process."""

    def __init__(self, started_unix: float | None = None, environ: dict[str, str] | None = None) -> None:
        self.started_unix = time.time() if started_unix is None else started_unix
        self.info: ProcessInfo | None = None
        self._settled = False  # nothing more to learn: a multi-process answer with devices, or a single process
        self._launcher = launcher_process(environ)

    @property
    def multi(self) -> bool:
        """Known to be one of several processes (by JAX, or else by the launcher's variables)."""
        return self.info is not None or self._launcher is not None

    def check(self) -> ProcessInfo | None:
        """Ask JAX (a few attribute reads until it answers, nothing after); None for a single or unknown process."""
        if self._settled:
            return self.info
        from jitscope.jaxcompat.distributed import backend_started, distributed_process, local_device_names

        found = distributed_process()
        if found is not None:
            devices = local_device_names()
            self.info = ProcessInfo(index=found.index, count=found.count, host=socket.gethostname(),
                                    local_devices=devices, pid=os.getpid(),
                                    started_unix=round(self.started_unix, 6), coordinator=found.coordinator,
                                    source=found.source)
            self._settled = bool(devices)  # else the devices come with the first compile
        elif backend_started():
            self._settled = True  # a backend without jax.distributed: one process, for good
        return self.info

    def at_exit(self) -> ProcessInfo | None:
        """The answer at exit: JAX's, else the launcher's (its variable named in ``source``), else None."""
        info = self.check()
        if info is None and self._launcher is not None:
            index, count, variable = self._launcher
            from jitscope.jaxcompat.distributed import local_device_names

            info = self.info = ProcessInfo(index=index, count=count, host=socket.gethostname(),
                                           local_devices=local_device_names(), pid=os.getpid(),
                                           started_unix=round(self.started_unix, 6), source=variable)
        return info


def process_path(out: str, index: int, default_suffix: str = ".json") -> str:
    """``run.json`` -> ``run.p1.json``; a folder (``runs/``, or one that exists) -> ``runs/run.p1.json``."""
    path = Path(out)
    if out.endswith(("/", os.sep)) or path.is_dir():
        return str(path / f"run.p{index}{default_suffix}")
    suffix = path.suffix
    stem = path.name[: -len(suffix)] if suffix else path.name
    return str(path.with_name(f"{stem}.p{index}{suffix}"))


def is_folder(out: str) -> bool:
    return out.endswith(("/", os.sep)) or Path(out).is_dir()


class Checkpoints:
    """Rewrites the partial report after compiles of the user's functions, on a thread of its own.

    ``request()`` is called from the compile path and only sets a flag; the writer thread renders
    and writes (atomically: a process killed mid-write leaves the previous checkpoint whole). It
    runs while the program's thread waits in XLA (which releases the GIL), so a process that hangs
    in a collective right after a compile still gets that compile written. ``close()`` stops it
    before the final report is written to the same file.
    """

    def __init__(self, write: Callable[[], None]) -> None:
        self._write = write
        self._wanted = threading.Event()
        self._closing = False
        self._thread: threading.Thread | None = None
        self.writes = 0
        self.failed: str | None = None

    def request(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="jitscope-checkpoints", daemon=True)
            self._thread.start()
        self._wanted.set()

    def _loop(self) -> None:
        while True:
            self._wanted.wait()
            if self._closing:
                return
            time.sleep(_COALESCE_S)  # compiles come in bursts: one write for the burst
            self._wanted.clear()
            if self._closing:
                return
            try:
                self._write()
                self.writes += 1
            except Exception as exc:  # noqa: BLE001 - a checkpoint must never take the program down
                self.failed = f"{type(exc).__name__}: {exc}"
                return

    def close(self) -> None:
        self._closing = True
        self._wanted.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


#: Seconds the checkpoint writer waits after a compile for the next one before writing.
_COALESCE_S = 0.05


_SUFFIXES = {"json": ".json", "markdown": ".md", "html": ".html", "text": ".txt"}


def report_path(out: str | None, process: ProcessInfo | None, fmt: str) -> str | None:
    """Where ``--out`` goes: as given for a single process (a folder: its ``run.json``), this process's own
    file in a multi-process run."""
    if out is None:
        return out
    if process is None:  # a folder (an error before there were processes): its run.json
        return str(Path(out) / f"run{_SUFFIXES.get(fmt, '.json')}") if is_folder(out) else out
    return process_path(out, process.index, _SUFFIXES.get(fmt, ".json"))
