"""``jitscope trace --out DIR``: each stage of each traced call as a file of its own, beside report.json.

``DIR/<target>[-N]/`` holds ``call.txt``, ``jaxpr.txt``, ``stablehlo.mlir``, ``hlo.txt``, ``cost.json`` and
``memory.json`` (those the stages asked for made).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from jitscope.model.trace import TraceReport
from jitscope.report.views.jaxpr_layout import LocationsMode


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
        from jitscope.inputs import file_kind

        what = "a file" if folder.is_file() else file_kind(folder.stat().st_mode)  # a FIFO, a device
        raise UsageError(f"--out {folder} is {what}", hint="name a folder (it is created), or a report such as "
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
