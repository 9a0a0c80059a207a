"""``--distributed``: bench, profile or trace inside each process of a job someone else launched.

``srun -n 4 jitscope bench mod:fn --mesh data=4 --distributed`` (or ``mpirun``, a TPU pod, Kubernetes, or
``JAX_COORDINATOR_ADDRESS`` with ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` set in each process): each
process joins the job through ``jax.distributed.initialize()`` as JAX detects it, before any backend
starts, then works as a ``--processes`` child does (lockstep rounds, its report tagged with its process,
``--save FILE`` as ``FILE.pI.json``). There is no launcher of ours to collect the files, and the hosts
need not share a disk, so the reports travel to process 0 through the coordination service's key-value
store, which ``initialize`` started there: process 0 shows the merged view, the others say one line.

A process whose command fails before its report is ready sends its error line in its place, so process
0 says why instead of waiting out ``GATHER_TIMEOUT_S``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from jitscope.errors import EXIT_FINDINGS, JitscopeError, UsageError

#: What jitscope reads for a job JAX cannot detect (JAX reads JAX_COORDINATOR_ADDRESS itself).
COUNT_ENV, INDEX_ENV = "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"
#: Seconds process 0 waits for the others' reports. Bench and profile end in lockstep, so the others are at
#: most moments behind; trace has no collective to keep them together, and a straggler's compile may take long.
GATHER_TIMEOUT_S = 300.0
#: What a process that failed sends instead of its report (a report is a JSON document: it starts with "{").
_FAILED = b"failed:"
WHAT_TO_SET = ("run it in every process of a job: srun -n N jitscope ... --distributed, mpirun, a TPU pod; or set "
               f"JAX_COORDINATOR_ADDRESS=host:port, {COUNT_ENV} and {INDEX_ENV} in each process; on one machine, "
               "--processes N launches them")

BY_HAND = f"set {COUNT_ENV} (the process count) and {INDEX_ENV} (this process's, from 0) in each process"


class JobError(JitscopeError):
    """Another process of the job failed, or sent no report: process 0 showed its own report instead."""

    exit_code = EXIT_FINDINGS


@dataclass(frozen=True, slots=True)
class Job:
    """This process's place in a job it joined with ``--distributed``, and the command it runs."""

    command: str  # "bench", "profile", "trace"
    coordinator: str
    index: int
    count: int

    @property
    def place(self) -> tuple[str, int, int]:
        """(coordinator, index, count), as ``hosts/launch.py`` names a ``--processes`` child's place."""
        return self.coordinator, self.index, self.count

    def key(self, index: int) -> str:
        return f"jitscope/{self.command}/report/p{index}"

    def name(self, index: int | None = None) -> str:
        return f"process {self.index if index is None else index} of {self.count}"


def join_job(command: str, devices: int | None = None, mesh: str | None = None) -> Job:
    """Join the job this process was launched in (``jax.distributed.initialize()``, before any backend
    starts); one line saying what to set when JAX finds no cluster, or the processes cannot meet.

    Then the backend starts, with this process's share of ``--devices``/``--mesh`` on CPU: starting it is
    where JAX's processes exchange their devices and wait for each other, so a process that fails later (its
    target does not import, a spec is wrong) fails after that meeting, and its error reaches process 0
    (``failures_sent``) instead of leaving it waiting there for a process that has gone."""
    from jitscope.jaxcompat.distributed import initialize_detected, joined_process
    from jitscope.load.mesh import parse_mesh, setup_devices

    count, index = _explicit(COUNT_ENV), _explicit(INDEX_ENV)
    try:
        initialize_detected(count=count, index=index)
    except ValueError as exc:
        raise _join_error(str(exc)) from None
    except RuntimeError as exc:
        text = str(exc).strip().splitlines()
        raise JitscopeError(f"--distributed: could not join the job's other processes: "
                            f"{text[0] if text else type(exc).__name__}",
                            hint="check that every process was started and can reach process 0's host, whose "
                            "coordinator JAX picked (JAX_COORDINATOR_ADDRESS sets it)") from None
    process = joined_process()
    if process is None:
        raise JitscopeError("--distributed: jax.distributed.initialize() returned without joining a job",
                            hint=WHAT_TO_SET)
    total = devices if devices is not None else parse_mesh(mesh).size if mesh is not None else None
    if total is not None:
        setup_devices(total)  # the mesh's devices, this process's share of them on CPU; the backend starts
    else:
        from jitscope.jaxcompat.sharding import devices as start_backend

        start_backend()
    return Job(command, process.coordinator, process.index, process.count)


def _explicit(name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise UsageError(f"--distributed: {name}={text!r} is not a whole number",
                         hint=f"set {COUNT_ENV} to the process count and {INDEX_ENV} to this process's index "
                         "from 0")
    return int(text)


def _join_error(message: str) -> UsageError:
    """JAX's ValueError, in words: what was not found, and what to set."""
    lowered = message.lower()
    hint = WHAT_TO_SET
    if "coordinator_address" in lowered:
        what = "JAX found no cluster to join (no Slurm, Open MPI, Kubernetes or Cloud TPU job here, and no " \
               "JAX_COORDINATOR_ADDRESS)"
    elif "number of processes" in lowered:
        what, hint = "JAX found a coordinator but no process count", BY_HAND
    elif "process id" in lowered:
        what, hint = "JAX found a coordinator but not this process's index", BY_HAND
    else:
        what = f"jax.distributed.initialize() refused: {message.strip().splitlines()[0] if message.strip() else '?'}"
    return UsageError(f"--distributed: {what}", hint=hint)


@contextmanager
def failures_sent(job: Job) -> Iterator[None]:
    """On a process other than 0, an error escaping the block is sent to process 0 in place of the report
    (then raised as usual), so process 0 names it rather than waiting for a report that will not come."""
    try:
        yield
    except Exception as exc:
        if job.index != 0:
            from jitscope.jaxcompat.distributed import KeyValueError, publish

            line = exc.one_line() if isinstance(exc, JitscopeError) else f"{type(exc).__name__}: {exc}"
            try:
                publish(job.key(job.index), _FAILED + line.encode())
            except KeyValueError:
                pass  # process 0 is gone too: its own error, or the launcher's, says so
        raise


def send_report(job: Job, text: str) -> None:
    """This process's report (JSON), to process 0."""
    from jitscope.jaxcompat.distributed import KeyValueError, publish

    try:
        publish(job.key(job.index), text.encode())
    except KeyValueError as exc:
        raise JitscopeError(f"--distributed: {job.name()} could not send its report to process 0: {exc}",
                            hint="process 0 may have ended early: its own output says why") from None


@dataclass(frozen=True, slots=True)
class Gathered:
    """What process 0 got from one other process: its report (JSON text), or why there is none."""

    index: int
    text: str | None
    missing: str = ""  # "failed: <its error line>", or "sent no report within 300 s (...)"


def gather_reports(job: Job, timeout_s: float = GATHER_TIMEOUT_S) -> list[Gathered]:
    """On process 0: every other process's report, by index, waiting up to ``timeout_s`` in all (at least a
    second for each, so one late process does not cost the others theirs)."""
    import time

    from jitscope.jaxcompat.distributed import KeyValueError, fetch

    deadline = time.monotonic() + timeout_s
    out = []
    for index in range(1, job.count):
        try:
            data = fetch(job.key(index), max(deadline - time.monotonic(), 1.0))
        except KeyValueError as exc:
            out.append(Gathered(index, None, f"sent no report within {timeout_s:.0f} s ({exc})"))
            continue
        if data.startswith(_FAILED):
            out.append(Gathered(index, None, f"failed: {data[len(_FAILED):].decode(errors='replace')}"))
        else:
            out.append(Gathered(index, data.decode()))
    return out
