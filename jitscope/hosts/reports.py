"""The per-process reports of one ``--processes`` run (``bench``, ``profile``), read and checked to be one run's.

Bad input is one line naming the file (exit 2): not a report of that command, a single-process one,
reports of different runs (process count, coordinator), two claiming one process, a process missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from jitscope.errors import UsageError
from jitscope.hosts.load import expand
from jitscope.inputs import NotJson, read_input, read_json, read_record

R = TypeVar("R", bound=Any)


def read_launched(cls: type[R], command: str) -> Callable[[Path], R]:
    """A reader of the report a process launched by ``--processes`` wrote (``launch.launch_reports``'s ``read``):
    one line naming the file when it does not read as ``cls``."""
    from jitscope.errors import JitscopeError

    def read(path: Path) -> R:
        try:
            return read_record(cls, read_json(path, f"{command} report"), f"{command} report", path)
        except UsageError as exc:
            raise JitscopeError(f"a process left an unreadable {exc.message}") from None

    return read


def _read_json(path: str) -> object:
    """The JSON document in ``path``, None when it is none (a folder's other JSON files may not be reports)."""
    raw = read_input(path, "report")
    try:
        return read_json(path, "report", raw=raw)
    except NotJson:
        return None


def report_kind(paths: Sequence[str]) -> str | None:
    """The kind of the reports to merge (the first JSON document that names one says), None when none does."""
    for path, _ in expand(paths):
        data = _read_json(path)
        if isinstance(data, dict) and isinstance(data.get("kind"), str):
            return str(data["kind"])
    return None


def load_process_reports(paths: Sequence[str], cls: type[R], kind: str, command: str) -> list[tuple[str, R]]:
    """Every process's report of kind ``kind`` (read as ``cls``, which has a ``process``), by process index,
    checked to be one run's; ``command`` names what wrote them (``bench``, ``profile``)."""
    loaded: list[tuple[str, R]] = []
    for path, named in expand(paths):
        data = _read_json(path)
        if not isinstance(data, dict) or data.get("kind") != kind:
            if not named:
                continue
            found = data.get("kind") if isinstance(data, dict) else None
            raise UsageError(f"{path}: not a jitscope {command} report (kind {found!r}), and the others are",
                             hint=f"merge the reports of one command: {command} --processes N --save FILE.json "
                             "wrote them")
        if not isinstance(data.get("process"), dict):
            raise UsageError(f"{path}: a single-process {command} report (no process index)",
                             hint=f"jitscope {command} TARGET --processes N --save FILE.json writes one per process")
        report = read_record(cls, data, f"{command} report", path)
        loaded.append((path, report))
    return _one_run(loaded)


def _one_run(loaded: list[tuple[str, R]]) -> list[tuple[str, R]]:
    first_path, first = loaded[0]
    assert first.process is not None
    by_index: dict[int, str] = {}
    for path, report in loaded:
        process = report.process
        assert process is not None
        if (process.count, process.coordinator) != (first.process.count, first.process.coordinator):
            raise UsageError(f"{path} is from another run (process {process.index} of {process.count} with "
                             f"coordinator {process.coordinator or '?'}, {first_path}: {first.process.count} "
                             f"with {first.process.coordinator or '?'})", hint="merge the reports of one run")
        if process.index in by_index:
            raise UsageError(f"{path} and {by_index[process.index]} both claim process {process.index}",
                             hint="they come from different runs, or one was copied: keep one")
        by_index[process.index] = path
    missing = [i for i in range(first.process.count) if i not in by_index]
    if missing:
        expected = first_path.replace(f".p{first.process.index}.", f".p{missing[0]}.")
        raise UsageError(f"no report for process {missing[0]} of {first.process.count} (expected {expected})")
    return sorted(loaded, key=lambda item: item[1].process.index if item[1].process else 0)


def per_process_path(save: Path, index: int) -> Path:
    """``bench.json`` -> ``bench.p1.json``: where ``--save`` puts process ``index``'s report."""
    suffix = save.suffix
    stem = save.name[: -len(suffix)] if suffix else save.name
    return save.with_name(f"{stem}.p{index}{suffix}")


def group_calls(loaded: Sequence[tuple[str, Any]]) -> tuple[list[Any], dict[tuple[str, str, str], dict[int, Any]],
                                                            dict[tuple[str, str, str], list[int]],
                                                            list[tuple[str, str, str]]]:
    """Per-process bench or profile reports lined up by call: (each process as a ``BenchProcess``, rows by
    (target, call, label) then process index, the processes each call failed on, every call in order of
    first appearance, failed-only calls last)."""
    from jitscope.model.hosts import BenchProcess

    processes = []
    rows: dict[tuple[str, str, str], dict[int, Any]] = {}
    failed: dict[tuple[str, str, str], list[int]] = {}
    for path, report in loaded:
        process = report.process
        assert process is not None
        processes.append(BenchProcess(process.index, process.host, process.local_devices, path))
        for row in report.rows:
            rows.setdefault((row.target, row.call, row.label), {})[process.index] = row
        for failure in report.failures:
            failed.setdefault((failure.target, failure.call, failure.label), []).append(process.index)
    keys = [*rows, *(key for key in failed if key not in rows)]
    return processes, rows, failed, keys
