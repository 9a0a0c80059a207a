"""load -> trace -> lower -> compile for ``jitscope trace``; returns records only (plus profilers)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jitscope.jaxcompat.caches import forget_other_functions_lines
from jitscope.load.calls import calls_from_flags, load_all
from jitscope.load.mesh import example_mesh_scope
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, check_call
from jitscope.model.trace import SourceLineRecord, TraceRecord, TraceReport
from jitscope.report.views.jaxpr_layout import LocationsMode
from jitscope.sharding.analyse import ShardingProbe
from jitscope.tracing.compile import CompileSkipped, lower_and_compile
from jitscope.tracing.line_costs import line_costs
from jitscope.tracing.lines import source_lines
from jitscope.tracing.recompile import cache_hits
from jitscope.tracing.session import TraceHandle, trace_target


def run_trace(
    targets: Sequence[str | TargetHandle],
    shapes: Sequence[str] | None,
    statics: list[str] | None,
    kwargs: list[str] | None,
    stages: Sequence[str],
    watch_effects: bool = True,
    profile: bool = False,
    progress: Callable[[float, int, str], None] | None = None,
) -> tuple[TraceReport, list[tuple[str, Any]]]:
    """Trace (and lower/compile as ``stages`` need) every call of every target.

    ``shapes`` holds one spec per call (a call sequence); ``progress(done, total, text)`` is
    told before each call, so a CLI can show a bar.
    """
    from jitscope.jaxcompat import features
    from jitscope.jaxcompat.stages import environment

    features.check_supported()  # one clear line on a JAX without what tracing needs
    handles = load_all(list(targets))
    records: list[TraceRecord] = []
    profilers: list[tuple[str, Any]] = []
    plan: list[tuple[TargetHandle, ArgSet, int, int]] = []
    for target in handles:
        calls = calls_from_flags(target, list(shapes) if shapes else None, statics, kwargs)
        for argset in calls:
            check_call(target, argset)
        hits = cache_hits(target, calls)
        plan += [(target, argset, i, hit) for i, (argset, hit) in enumerate(zip(calls, hits, strict=True), 1)]
    with example_mesh_scope(argset for _, argset, _, _ in plan):  # the examples' mesh, when --mesh is not given
        for done, (target, argset, index, hit) in enumerate(plan):
            if progress is not None:
                progress(done, len(plan), f"tracing {target.attr_path}({argset.describe()[:40]})")
            forget_other_functions_lines(target.name)
            handle = trace_target(target, argset, watch_effects=watch_effects, profile=profile,
                                  want_jaxpr="jaxpr" in stages)
            # A cache hit needs the earlier call to have traced: a failed trace caches nothing.
            earlier = records[len(records) - (index - hit)] if hit else None
            hit_of = hit if earlier is not None and earlier.diagnostic is None else None
            record = dataclasses.replace(handle.record, call_index=index, cache_hit_of=hit_of)
            if handle.traced is not None:
                probe = ShardingProbe(argset, tuple(a.path for a in record.seen if a.kind == "traced"))
                compiled: list[Any] = []

                def on_compiled(lowered: Any, executable: Any, probe: ShardingProbe = probe,
                                compiled: list[Any] = compiled) -> None:
                    probe(lowered, executable)
                    compiled.append(executable)

                try:
                    record = dataclasses.replace(record, stages=lower_and_compile(handle.traced, stages, on_compiled))
                except CompileSkipped as skipped:
                    record = dataclasses.replace(record, stages=skipped.partial,
                                                 warnings=(*record.warnings, skipped.reason))
                record = dataclasses.replace(record, sharding=probe.record,
                                             source_lines=_source_lines(handle, record, compiled))
            records.append(record)
            if handle.profiler is not None:
                profilers.append((f"{record.target}({record.call})", handle.profiler))
    return TraceReport(traces=tuple(records), environment=environment()), profilers


def _source_lines(handle: TraceHandle, record: TraceRecord, compiled: list[Any]) -> tuple[SourceLineRecord, ...]:
    """The jaxpr by line of the user's code, with XLA's FLOPs and bytes split over the lines when compiled."""
    if record.jaxpr is None:
        return ()
    costs = None
    if compiled and handle.project is not None:
        from jitscope.jaxcompat.stages import cost_record

        text = _module_text(compiled[0])
        cost = record.stages.cost if record.stages is not None and record.stages.cost else cost_record(compiled[0])
        if text:
            costs = line_costs(text, record.jaxpr, handle.project.is_user_file, cost.flops if cost else None,
                               cost.bytes_accessed if cost else None)
    return source_lines(record.jaxpr, costs)


def _module_text(compiled: Any) -> str | None:
    """The optimised HLO with its source stacks (the stack-frame tables ``StagesRecord.hlo`` leaves out)."""
    try:
        text = compiled.as_text()
    except Exception:  # noqa: BLE001 - a backend without HLO text: no costs per line
        return None
    return str(text) if text else None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "trace"


def write_outputs(report: TraceReport, out: Path, *, locations: LocationsMode | bool, depth: int | None,
                  fold: bool = False) -> list[Path]:
    """Write each stage of each trace to ``out/<target>[-N]/``, plus the whole JSON report.

    The folder is built beside ``out`` and swapped in whole (``outputs.replaced_folder``): a failed
    write leaves the previous one as it was, never a mix. An existing ``out`` must be empty or a
    previous folder of this kind: jitscope does not replace a folder holding other files.
    """
    from jitscope.outputs import output_path, replaced_folder

    final = output_path(out)
    check_stage_folder(final)
    with replaced_folder(final) as building:
        written = _write_stage_files(report, building, locations=locations, depth=depth, fold=fold)
    return [final / path.relative_to(building) for path in written]


#: What a folder of stage files holds (``trace --out DIR``).
STAGE_FILES = frozenset({"call.txt", "jaxpr.txt", "stablehlo.mlir", "hlo.txt", "cost.json", "memory.json"})


def check_stage_folder(folder: Path) -> None:
    """Refuse to replace a folder that holds anything but an earlier ``trace --out`` (one error line)."""
    if not folder.exists():
        return
    from jitscope.errors import UsageError

    if not folder.is_dir():
        raise UsageError(f"--out {folder} is a file", hint="name a folder (it is created), or a report such as "
                         "report.html")
    for entry in folder.iterdir():
        if entry.name == "report.json" and entry.is_file():
            continue
        if entry.is_dir() and not entry.is_symlink() and all(f.name in STAGE_FILES and f.is_file()
                                                              for f in entry.iterdir()):
            continue
        raise UsageError(f"--out {folder} holds files jitscope did not write ({entry.name})",
                         hint="name a new or empty folder: jitscope replaces its output folder whole")


def _write_stage_files(report: TraceReport, out: Path, *, locations: LocationsMode | bool, depth: int | None,
                       fold: bool) -> list[Path]:
    from jitscope.model.common import to_jsonable
    from jitscope.report.views.jaxpr import render_jaxpr_text
    from jitscope.report.writers.json import dumps

    written: list[Path] = [out / "report.json"]
    (out / "report.json").write_text(dumps(report) + "\n")
    counts: dict[str, int] = {}
    for record in report.traces:
        base = _slug(record.target.rsplit(":", 1)[-1])
        counts[base] = counts.get(base, 0) + 1
        folder = out / (base if counts[base] == 1 else f"{base}-{counts[base]}")
        folder.mkdir(exist_ok=True)
        files: dict[str, str | None] = {
            "call.txt": record.call + "\n",
            "jaxpr.txt": render_jaxpr_text(record.jaxpr, record.summary, locations=locations, depth=depth,
                                           fold=fold)
            if record.jaxpr is not None else None,
        }
        st = record.stages
        if st is not None:
            files["stablehlo.mlir"] = st.stablehlo
            files["hlo.txt"] = st.hlo
            files["cost.json"] = json.dumps(to_jsonable(st.cost), indent=2) + "\n" if st.cost else None
            files["memory.json"] = json.dumps(to_jsonable(st.memory), indent=2) + "\n" if st.memory else None
        for name, text in files.items():
            if text is not None:
                (folder / name).write_text(text)
                written.append(folder / name)
    return written
