"""The per-process reports ``jitscope merge`` reads, checked to be one run's, each process once.

Every problem is one line naming the file (``UsageError``, exit 2): not a ``jitscope run``
report; a schema this jitscope cannot read, or a single-process report (no process index); files
of different runs (another program, process count or coordinator, or lifetimes that never
overlapped: the processes of one job all wait for each other in ``jax.distributed.initialize``,
so they were alive at the same time; their arguments may differ, as when each is given its
index on the command line); two files claiming one process; a process with no file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jitscope.errors import UsageError
from jitscope.model.run import RUN_SCHEMA_VERSION_PROCESSES, RunRecord

RUN_KIND = "jitscope.run"
#: The schema versions merge reads: major 1, from the version that added the process (1.3).
_MAJOR, _MIN_MINOR = 1, int(RUN_SCHEMA_VERSION_PROCESSES.split(".")[1])
#: How every run report jitscope writes starts (its first field): a file that does and is not whole JSON
#: is a damaged report, never "no report".
_RUN_REPORT_START = re.compile(rb'\s*\{\s*"program"\s*:')
#: Hosts' clocks may disagree by this much (NTP keeps them far closer) when judging whether two
#: processes were alive at the same time.
CLOCK_SLACK_S = 5.0


@dataclass(frozen=True, slots=True)
class ProcessReport:
    path: str
    record: RunRecord

    @property
    def index(self) -> int:
        assert self.record.process is not None
        return self.record.process.index


def expand(paths: Sequence[str]) -> list[tuple[str, bool]]:
    """Files to read, each with whether the user named it (a folder's ``*.json`` were not named one by one)."""
    out: list[tuple[str, bool]] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.is_file())
            if not found:
                raise UsageError(f"{text}: no .json reports in this folder",
                                 hint="give the files jitscope run --out wrote (run.p0.json, run.p1.json, ...)")
            out.extend((str(p), False) for p in found)
        elif path.is_file() or path.exists():  # a FIFO or a device: read_input refuses it, saying what it is
            out.append((text, True))
        else:
            raise UsageError(f"{text}: no such file or folder")
    if not out:
        raise UsageError("nothing to merge", hint="give the per-process reports, or the folder holding them")
    return out


def read_report(path: str, named: bool = True) -> ProcessReport | None:
    """One process's report; None for a folder's JSON file that is no jitscope run report (skipped)."""
    from jitscope.inputs import NotJson, read_input, read_json, read_record

    raw = read_input(path, "run report")
    try:
        data = read_json(path, "run report", raw=raw)
    except NotJson:
        if _RUN_REPORT_START.match(raw):  # a report jitscope wrote, cut short (or edited): not a missing one
            raise UsageError(f"{path}: a damaged run report, not whole JSON (cut short?)",
                             hint="copy it again from where its process wrote it, or move it aside and merge "
                             "the others with --allow-missing") from None
        if not named:
            return None
        raise UsageError(f"{path}: not JSON (merge reads the reports of jitscope run --out FILE.json)") from None
    if not isinstance(data, dict) or data.get("kind") != RUN_KIND:
        if not named:
            return None
        kind = data.get("kind") if isinstance(data, dict) else None
        raise UsageError(f"{path}: not a jitscope run report (kind {kind!r})",
                         hint="merge reads the JSON each process's jitscope run --out wrote")
    version = str(data.get("schema_version", ""))
    major, _, minor = version.partition(".")
    if not (major.isdigit() and minor.isdigit()) or int(major) != _MAJOR:
        raise UsageError(f"{path}: run report schema {version or '?'}, which this jitscope does not read "
                         f"({_MAJOR}.x)", hint="merge reports written by the same jitscope version")
    if int(minor) < _MIN_MINOR or not isinstance(data.get("process"), dict):
        raise UsageError(f"{path}: a single-process run report (schema {version}, no process index)",
                         hint="run every process under jitscope run after the program calls "
                         "jax.distributed.initialize")
    record = read_record(RunRecord, data, "run report", path)
    if record.process is None:
        raise UsageError(f"{path}: a damaged run report (no process index)")
    _check_kept_programs(path, record)
    return ProcessReport(path, record)


def _check_kept_programs(path: str, record: RunRecord) -> None:
    """Every compile's kept HLO unpacks, within the bound (a tampered report could unpack to gigabytes)."""
    from jitscope.run.programs import kept_hlo_problem

    for at, event in enumerate(record.events):
        problem = kept_hlo_problem(event.program) if event.program is not None else None
        if problem is not None:
            raise UsageError(f"{path}: events[{at}].program.hlo_zlib {problem}: a damaged run report, not read",
                             hint="merge the reports jitscope run --out wrote, unchanged")


def load_reports(paths: Sequence[str], *, allow_missing: bool = False) -> tuple[list[ProcessReport], list[str]]:
    """Every process's report, by process index, checked; and notes (files skipped, processes missing)."""
    notes: list[str] = []
    reports: list[ProcessReport] = []
    for path, named in expand(paths):
        report = read_report(path, named)
        if report is None:
            notes.append(f"{path}: skipped (not a jitscope run report)")
            continue
        reports.append(report)
    if not reports:
        raise UsageError(f"no jitscope run reports in {', '.join(paths)}")
    _check_one_run(reports)
    by_index: dict[int, ProcessReport] = {}
    for report in reports:
        other = by_index.get(report.index)
        if other is not None:
            raise UsageError(f"{report.path} and {other.path} both claim process {report.index}",
                             hint="they come from different runs, or one was copied: keep one")
        by_index[report.index] = report
    count = reports[0].record.process.count if reports[0].record.process is not None else 0
    outside = [r for r in reports if not 0 <= r.index < count]
    if outside:
        raise UsageError(f"{outside[0].path}: process {outside[0].index}, but the run had {count} processes")
    missing = [i for i in range(count) if i not in by_index]
    if missing:
        first = reports[0].path
        expected = first.replace(f".p{reports[0].index}.", f".p{missing[0]}.") if f".p{reports[0].index}." in first \
            else f"the report of process {missing[0]}"
        names = ", ".join(f"p{i}" for i in missing)
        if not allow_missing:
            raise UsageError(f"no report for process{'es' if len(missing) > 1 else ''} {names} of {count} "
                             f"(expected {expected})",
                             hint="a process killed before its first compile leaves none; --allow-missing "
                             "merges the others")
        notes.append(f"no report for {names} of {count} processes (--allow-missing)")
    return [by_index[i] for i in sorted(by_index)], notes


#: What one run's processes share. Not their arguments: a program launched by hand as JAX's multi-process
#: documentation shows (``python prog.py PROCESS_ID NUM_PROCESSES PORT``) gives each process its own argv.
_IDENTITY = ("program", "process count", "coordinator")


def _check_one_run(reports: list[ProcessReport]) -> None:
    """All reports come from one run of one program: the same program, process count and coordinator (every
    process of a job joins the one coordinator), and lifetimes that overlap; each index once is checked by
    the caller."""
    def identity(r: ProcessReport) -> tuple[object, ...]:
        p = r.record.process
        assert p is not None
        return (r.record.program, p.count, p.coordinator)

    counts: dict[tuple[object, ...], int] = {}
    for report in reports:
        counts[identity(report)] = counts.get(identity(report), 0) + 1
    common = max(counts, key=lambda k: counts[k])
    for report in reports:
        mine = identity(report)
        if mine != common:
            what = next(name for name, a, b in zip(_IDENTITY, mine, common, strict=True) if a != b)
            raise UsageError(f"{report.path} is from another run ({what} {_show(mine, what)}, not "
                             f"{_show(common, what)} as in the others)", hint="merge the reports of one run")
    # processes of one job were all alive at once (jax.distributed.initialize waits for all of them)
    spans = [(r.record.process.started_unix, r.record.process.started_unix + r.record.wall_s, r)
             for r in reports if r.record.process is not None and r.record.process.started_unix > 0]
    if len(spans) > 1:
        latest_start = max(spans, key=lambda s: s[0])
        earliest_end = min(spans, key=lambda s: s[1])
        if latest_start[0] > earliest_end[1] + CLOCK_SLACK_S:
            late, early = latest_start[2], earliest_end[2]
            raise UsageError(f"{late.path} is from another run: it started "
                             f"{latest_start[0] - earliest_end[1]:.0f} s after {early.path}'s process had ended",
                             hint="merge the reports of one run (one folder per run: --out runs/$JOB/)")


def _show(identity: tuple[object, ...], what: str) -> str:
    value = identity[_IDENTITY.index(what)]
    return repr(value) if isinstance(value, str) else str(value)
