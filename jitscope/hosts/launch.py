"""``jitscope bench TARGET --processes N``: N local CPU processes of one command, joined by ``jax.distributed``.

``bench`` loads a target rather than running the user's program, so it is not slipped into the
processes of a job the way ``jitscope run`` is: with ``--distributed`` it joins a job already launched
(``hosts/distributed.py``); with ``--processes`` it starts the job itself, on one machine: N
processes of ``python -m jitscope bench ...`` on CPU, each told its place in ``JITSCOPE_PROCESS``
(``coordinator,index,count``; the coordinator is process 0 on a free local port), each joining
``jax.distributed`` (gloo collectives) before anything starts a backend, so the mesh of ``--mesh``
spans every process's devices. Each writes its own report; ``hosts/bench.py`` lines them up.

A process whose call fails or that dies leaves the others waiting in a collective: once one has
ended badly, the rest get ``GRACE_S`` to finish, then are killed, and the failure is one line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from jitscope import children
from jitscope.errors import JitscopeError, UsageError, UserCodeError
from jitscope.model.run import ProcessInfo

if TYPE_CHECKING:  # bench's options, only replaced here: trace and profile need not import bench's timing
    from jitscope.timing.runner import BenchOptions

R = TypeVar("R")

#: The environment variable a launched process reads its place from: "host:port,index,count".
PROCESS_ENV = "JITSCOPE_PROCESS"
#: Seconds the other processes get to end once one has failed (they are likely waiting in a collective).
GRACE_S = 5.0
#: Exit codes of a process that still wrote its report (1: a call of the user's function failed).
REPORTED = (0, 1)


@dataclass(frozen=True, slots=True)
class Launched:
    index: int
    returncode: int
    report: Path
    log: str  # what the process wrote on stderr


def process_place(environ: dict[str, str] | None = None) -> tuple[str, int, int] | None:
    """(coordinator, index, count) when this process was launched by ``--processes``; None otherwise."""
    text = (os.environ if environ is None else environ).get(PROCESS_ENV, "")
    parts = text.split(",")
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    index, count = int(parts[1]), int(parts[2])
    return (parts[0], index, count) if 0 <= index < count else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def launch(command: Sequence[str], count: int, folder: Path, *, timeout: float, name: str = "bench") -> list[Launched]:
    """Run ``jitscope COMMAND... --format json --out FOLDER/NAME.pI.json`` in ``count`` local processes.

    Returns every process's outcome by index; raises one line when a process left no report.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
    env.update({"JAX_PLATFORMS": "cpu", "NO_COLOR": "1"})
    coordinator = f"127.0.0.1:{free_port()}"
    procs: list[subprocess.Popen[str]] = []
    logs = []
    with contextlib.ExitStack() as running:  # on leaving, each process is killed with its group (children.py)
        for index in range(count):
            report = folder / f"{name}.p{index}.json"
            log = open(folder / f"{name}.p{index}.log", "w+")  # noqa: SIM115 - closed below
            logs.append(log)
            procs.append(running.enter_context(children.group_of(children.start(
                [sys.executable, "-m", "jitscope", *command, "--format", "json", "--out", str(report)],
                env={**env, PROCESS_ENV: f"{coordinator},{index},{count}"}, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=log, text=True))))
        _wait(procs, [folder / f"{name}.p{i}.json" for i in range(count)], timeout)
    out = []
    for index, (proc, log) in enumerate(zip(procs, logs, strict=True)):
        log.seek(0)
        out.append(Launched(index, proc.returncode, folder / f"{name}.p{index}.json", log.read()))
        log.close()
    _check(out, count)
    return out


def launch_reports(command: Sequence[str], count: int, *, name: str, read: Callable[[Path], R], save: Path | None,
                   timeout: float) -> list[tuple[str, R]]:
    """``launch`` in a scratch folder, each process's report read with ``read``, by index, with the file it is
    kept in: ``save`` -> ``FILE.pI.json`` (what ``jitscope merge`` reads), else ``(not saved)`` (the scratch
    file is removed)."""
    from jitscope.hosts.reports import per_process_path
    from jitscope.outputs import scratch_folder, write_atomic

    loaded = []
    with scratch_folder(f"jitscope-{name}-") as folder:
        for item in launch(command, count, folder, timeout=timeout, name=name):
            report = read(item.report)
            kept = "(not saved)"
            if save is not None:
                path = per_process_path(save, item.index)
                write_atomic(path, item.report.read_text())
                kept = str(path)
            loaded.append((kept, report))
    return loaded


def _wait(procs: list[subprocess.Popen[str]], reports: list[Path], timeout: float) -> None:
    """Until every process has ended. Processes in lockstep finish together: once one has written its report
    or ended, the others get as long again as it took (GRACE_S once one ended badly), then they are killed:
    they wait in a collective, or in jax.distributed's shutdown, for a process that will not come. Once every
    report is written, lingering processes get GRACE_S."""
    start = time.monotonic()
    deadline = start + timeout
    graced = finished = False
    while any(p.poll() is None for p in procs):
        now = time.monotonic()
        done = [p for p, r in zip(procs, reports, strict=True) if p.poll() is not None or r.is_file()]
        if len(done) == len(procs) and not finished:
            finished = True
            deadline = min(deadline, now + GRACE_S)
        elif done and not graced:
            graced = True
            bad = any(p.poll() is not None and p.returncode not in REPORTED for p in done)
            deadline = min(deadline, now + (GRACE_S if bad else max(GRACE_S, now - start)))
        if now >= deadline:
            return
        time.sleep(0.05)


def _check(out: list[Launched], count: int) -> None:
    """Every process left its report (one killed after writing it lingered in shutdown: its figures stand)."""
    reported = [item for item in out if item.report.is_file()]
    errors = {item.index: _failures(item.report) for item in reported}  # each report read once
    origins = [item for item in reported if errors[item.index] and not _lost_peer(errors[item.index])]
    for item in out:
        if origins and item not in origins and _lost_peer(errors.get(item.index, [])):
            first = origins[0]  # its collective broke when that process ended: that one says why
            raise UserCodeError(f"process {item.index} of {count} lost its peers in a collective after process "
                                f"{first.index} had finished: {_last_line(first.log)}")
        if item.report.is_file() and (item.returncode in REPORTED or item.returncode < 0):
            continue
        if item.returncode >= 0:
            raise JitscopeError(f"process {item.index} of {count} exited {item.returncode} without a report: "
                                f"{_last_line(item.log)}")
        if reported:  # stopped while waiting for a process that was done: that one says why
            first = reported[0]
            failed = UserCodeError if errors[first.index] else JitscopeError
            raise failed(f"process {item.index} of {count} was stopped, still waiting (in a collective) "
                                f"after process {first.index} had finished: {_last_line(first.log)}")
        raise JitscopeError(f"process {item.index} of {count} was stopped after the time limit: "
                            f"{_last_line(item.log)}")


def _failures(report: Path) -> list[str]:
    """The error lines of the calls of the user's function a process's report records as failed (a call that
    failed: exit 1, their code)."""
    import json

    try:
        return [str(f.get("error", "")) for f in json.loads(report.read_text()).get("failures") or ()]
    except (OSError, ValueError, AttributeError):
        return []


#: What a collective says when another process ended in the middle of it (gloo's TCP transport on CPU).
_PEER_LOST = re.compile(r"Connection (?:closed|reset) by peer|Gloo [\w-]+ failed|Broken pipe")


def _lost_peer(errors: list[str]) -> bool:
    """Whether every failed call of a process failed because another process left its collective: the
    first process to end (its call failed) is then the cause, not this one."""
    return bool(errors) and all(_PEER_LOST.search(error) for error in errors)


def _last_line(log: str) -> str:
    """The line that says why: jitscope's own error line, else the last line that is not gloo's chatter."""
    lines = [line.strip() for line in log.splitlines() if line.strip() and not line.startswith("[Gloo]")]
    errors = [line for line in lines if line.startswith("error:")]
    line = (errors or lines or ["(it printed nothing)"])[-1]
    return line.removeprefix("error:").strip()


def check_processes(count: int, devices: int | None, mesh: str | None, command: str = "bench") -> int:
    """The devices of the whole mesh for ``--processes count``: ``--devices``, else the size of ``--mesh``, else
    one per process; each process must bring the same number."""
    from jitscope.load.mesh import parse_mesh

    if count < 2:
        raise UsageError(f"--processes {count}: at least 2", hint=f"without --processes, {command} runs in one "
                         "process")
    total = devices if devices is not None else parse_mesh(mesh).size if mesh else count
    if total % count:
        raise UsageError(f"--processes {count} cannot share {total} devices evenly",
                         hint=f"give --devices/--mesh a multiple of {count}: each process brings the same number")
    return total


#: The fewest rounds each process times in lockstep (``--min-rounds`` raises it): one call per round and no
#: clock deciding when to stop, so a median needs more of them than an adaptive run's rounds of many calls.
LOCKSTEP_ROUNDS = 20


def join(place: tuple[str, int, int]) -> None:
    """Join the other processes through ``jax.distributed``, before any backend starts."""
    from jitscope.jaxcompat.distributed import initialize

    coordinator, index, count = place
    initialize(coordinator, count, index)


def lockstep(options: BenchOptions) -> BenchOptions:
    """Bench ``options`` for one process of several: exactly the same rounds on each, so none waits for good."""
    return dataclasses.replace(options, lockstep_rounds=max(options.min_rounds, LOCKSTEP_ROUNDS))


def this_process(place: tuple[str, int, int]) -> ProcessInfo:
    """Which process this is, for its report (its devices: the backend has started by now)."""
    from jitscope.jaxcompat.distributed import local_device_names

    coordinator, index, count = place
    return ProcessInfo(index=index, count=count, host=socket.gethostname(), local_devices=local_device_names(),
                       pid=os.getpid(), coordinator=coordinator)
