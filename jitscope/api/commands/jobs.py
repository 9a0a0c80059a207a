"""The end of a command run in many processes, shared by bench, profile and trace.

``--processes N`` (local processes jitscope launched, ``hosts/launch.py``) and ``--distributed`` (one
process of a job someone else launched, ``hosts/distributed.py``) both end with one merged report:
``write_merged`` shows it; ``finish_job`` is a ``--distributed`` process's end (its report sent to
process 0, which gathers, merges and shows them). Kept apart from the commands so that ``trace``
does not import bench's timing machinery to start.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jitscope.api.targets import TargetFlags
    from jitscope.hosts.distributed import Job

#: (given, option, hint): an option that ``--processes``/``--distributed`` cannot go with.
Refused = tuple[bool, str, str]


def refuse_for_processes(switch: str, flags: TargetFlags, same_calls: str, *more: Refused) -> None:
    """One line (exit 2) for the first option given that ``switch`` cannot go with: calls taken from elsewhere
    (``--from-run``, ``--from``; hint ``same_calls``), which would differ between the processes, then ``more``."""
    from jitscope.errors import UsageError

    refused: Iterable[Refused] = ((flags.from_run, "--from-run", same_calls),
                                  (flags.from_capture is not None, "--from", same_calls), *more)
    for given, name, hint in refused:
        if given:
            raise UsageError(f"{switch} cannot be combined with {name}", hint=hint)


def join_first(command: str, devices: int | None, mesh: str | None, *, distributed: bool
               ) -> tuple[tuple[str, int, int] | None, Job | None]:
    """Join the other processes before anything starts a backend, when this is one of several: of a job someone
    else launched (``--distributed``: srun, mpirun), or one ``--processes`` launched (``JITSCOPE_PROCESS``).
    Returns (coordinator, index, count) and the job (``--distributed`` only); (None, None) in one process."""
    from jitscope.hosts.launch import join, process_place
    from jitscope.stdout import user_output_to_stderr

    if distributed:
        from jitscope.hosts.distributed import join_job

        with user_output_to_stderr():  # gloo says on stdout that the processes connected
            job = join_job(command, devices, mesh)
        return job.place, job
    place = process_place()
    if place is not None:
        join(place)
    return place, None


#: Seconds a bench --processes run may take before its processes are stopped.
LAUNCH_TIMEOUT_S = 900.0


def failures_sent(job: Job | None) -> AbstractContextManager[None]:
    """``hosts.distributed.failures_sent`` for a process of a ``--distributed`` job; nothing otherwise."""
    if job is None:
        return contextlib.nullcontext()
    from jitscope.hosts.distributed import failures_sent as sent

    return sent(job)


def finish_job(job: Job, report: Any, *, save: Path | None, merge: Callable[[list[tuple[str, Any]]], Any],
               fmt_name: str, out: Path | None, show_own: Callable[[], None]) -> list[tuple[str, Any]]:
    """The end of a ``--distributed`` command: this process's report saved as ``FILE.pI.json`` (``save``); on
    process 0, every other process's report gathered (JAX's key-value store), merged (``merge``) and shown as
    ``--processes`` shows it (``out``: the merged report); on the others, one line on stderr. Returns the
    reports it has, by process index, named by their files. When another process failed or sent nothing,
    process 0 shows its own report (``show_own``) and raises ``JobError`` (exit 1) saying which and why."""
    from jitscope.hosts.distributed import gather_reports, send_report
    from jitscope.hosts.reports import per_process_path
    from jitscope.outputs import write_atomic
    from jitscope.report.writers.console import make_console
    from jitscope.report.writers.json import dumps

    def where(index: int) -> str:
        return str(per_process_path(save, index)) if save is not None else "(not saved)"

    text = dumps(report)
    if save is not None:
        write_atomic(per_process_path(save, job.index), text + "\n")
    stderr = make_console(stderr=True)
    if job.index != 0:
        send_report(job, text)
        kept = f"report saved to {where(job.index)} and sent" if save is not None else "report sent"
        stderr.print(f"jitscope {job.command}: {job.name()}: {kept} to process 0, which shows the merged view",
                     markup=False, highlight=False)
        return [(where(job.index), report)]
    loaded: list[tuple[str, Any]] = [(where(0), report)]
    if job.count == 1:  # a job of one process (srun -n 1): nothing to merge, its own report says it all
        show_own()
        return loaded
    stderr.print(f"jitscope {job.command}: process 0 of {job.count} (coordinator {job.coordinator}): "
                 "gathering the other processes' reports ...", markup=False, highlight=False)
    missing = []
    for item in gather_reports(job):
        parsed = _parse_report(type(report), item.text) if item.text is not None else item.missing
        if isinstance(parsed, str):  # why there is no report
            missing.append((item.index, parsed))
        else:
            loaded.append((where(item.index), parsed))
    if missing:
        show_own()
        raise _missing_error(job, missing, saved=save is not None)
    write_merged(merge(loaded), fmt_name, out)
    return loaded


def _missing_error(job: Job, missing: list[tuple[int, str]], *, saved: bool) -> Exception:
    """The one line process 0 ends with when processes sent no report: the first, why, and how many more."""
    from jitscope.hosts.distributed import JobError

    index, why = missing[0]
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    hint = "each process's own output says why"
    if saved:
        hint += "; those that finished saved --save FILE.pI.json for jitscope merge"
    return JobError(f"{job.name(index)} {why}{more}: process 0's own report is shown instead of the merged view",
                    hint=hint)


def _parse_report(cls: type, text: str) -> Any:
    """A report another process sent (JSON), as ``cls``; a string saying why when it does not read."""
    import json

    from jitscope.model.common import from_jsonable

    try:
        return from_jsonable(cls, json.loads(text))
    except (ValueError, TypeError, KeyError) as exc:
        return f"sent a report this jitscope cannot read ({type(exc).__name__}: {exc}; another jitscope version?)"


def write_merged(merged: Any, fmt_name: str, out: Path | None) -> None:
    """A merged report of ``--processes`` (bench's, profile's or trace's, by its kind) on stdout or in ``out``."""
    from jitscope.report.writers.destination import write_document, write_report

    if fmt_name == "json":
        from jitscope.report.writers.json import dumps

        write_report(dumps(merged), out)
        return
    from jitscope.model.hosts import PROFILE_MERGE_KIND, TRACE_MERGE_KIND

    if merged.kind == PROFILE_MERGE_KIND:
        from jitscope.report.views.merge_profile import merge_profile_document

        document = merge_profile_document(merged)
    elif merged.kind == TRACE_MERGE_KIND:
        from jitscope.report.views.merge_trace import merge_trace_document

        document = merge_trace_document(merged)
    else:
        from jitscope.report.views.merge_bench import merge_bench_document

        document = merge_bench_document(merged)
    write_document(document, fmt_name, out)
