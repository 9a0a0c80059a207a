"""A sharded call's ``ShardingRecord`` as a view section: what each device holds, what crosses the network.

Hooked into ``report/views/trace.py`` (one section per traced call of a sharded program), so text,
Markdown and HTML all show it. Records only: no JAX here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jitscope.model.sharding import TRAFFIC_FORMULAS, Collective, LeafSharding, ShardingRecord
from jitscope.report.views.document import Block, Column, KeyValues, Note, Paragraph, Section, Table, pieces
from jitscope.units import fmt_bytes, fmt_duration, fmt_share, plural

if TYPE_CHECKING:
    from jitscope.model.profile import OpRecord  # profile's ops; imported for the annotation only


def _shape(dtype: str, shape: tuple[int, ...]) -> str:
    return f"{dtype}[{','.join(map(str, shape))}]"


def _where(file: str, line: int) -> str:
    return f"{os.path.basename(file)}:{line}" if file else "(no source line)"


def _leaf_row(leaf: LeafSharding) -> tuple[str, ...]:
    spec = leaf.spec or "(other)"
    if leaf.requested:
        spec += f" (asked {leaf.requested})"
    return (leaf.role, leaf.path, _shape(leaf.dtype, leaf.shape), spec, _shape(leaf.dtype, leaf.shard_shape),
            fmt_bytes(leaf.shard_bytes))


def layout_table(record: ShardingRecord) -> Table:
    columns = (Column("", style="jitscope.muted"), Column("leaf"), Column("global"), Column("spec"),
               Column("per device"), Column("bytes/device", "right"))
    return Table(columns, tuple(_leaf_row(leaf) for leaf in (*record.inputs, *record.outputs)))


def _collective_row(c: Collective) -> tuple[str, ...]:
    flags = ", ".join(f for f, on in (("async", c.is_async), ("in loop", c.in_loop)) if on)
    group = f"{c.group_size}" + (f" x{c.groups}" if c.groups > 1 else "")
    result = _shape(c.dtype, c.shape) + (f" +{c.arrays - 1}" if c.arrays > 1 else "")
    return (c.kind, result, ",".join(c.axes) or "-", group, fmt_bytes(c.send_bytes),
            fmt_bytes(c.recv_bytes), _where(c.file, c.line), flags)


def collectives_table(record: ShardingRecord) -> Table:
    columns = (Column("collective"), Column("result/device"), Column("axes"), Column("group", "right"),
               Column("sends", "right"), Column("receives", "right"), Column("from"), Column("notes"))
    return Table(columns, tuple(_collective_row(c) for c in record.collectives))


def _code(source: str, width: int = 44) -> str:
    """A source line without its comment, shortened to fit a table cell."""
    code = source.split("  #")[0].strip()
    return code if len(code) <= width else code[: width - 1] + "…"


def by_line_table(record: ShardingRecord) -> Table:
    columns = (Column("line", "right"), Column("file"), Column("source"), Column("collectives"),
               Column("sends/device", "right"), Column("receives/device", "right"))
    rows = tuple((str(r.line) if r.file else "", os.path.basename(r.file) or "(no source line)", _code(r.source), f"{r.count} {', '.join(r.kinds)}", fmt_bytes(r.send_bytes),
                  fmt_bytes(r.recv_bytes)) for r in record.by_line)
    return Table(columns, rows)


def sharding_section(record: ShardingRecord, page: str = "t1") -> Section:
    """The whole sharding view of one call."""
    mesh = str(record.mesh) if record.mesh is not None else "(none)"
    counts = record.counts()
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "none"
    rows = [("mesh", mesh), ("devices", str(record.devices)), ("collectives", summary),
            ("sent per device", fmt_bytes(record.send_bytes)), ("received per device", fmt_bytes(record.recv_bytes))]
    blocks: list[Block] = [KeyValues(tuple(rows))]
    blocks += [Note(w.message + (f" ({_where(w.file, w.line)})" if w.file else ""), "warning", "warning")
               for w in record.warnings]
    blocks.append(Section("what each device holds", (layout_table(record),), id=f"{page}-layout", level=3))
    if record.collectives:
        blocks.append(Section("collectives in the optimised HLO", (collectives_table(record),),
                              plural(len(record.collectives), "collective"), id=f"{page}-collectives", level=3))
        blocks.append(Section("communication by source line", (by_line_table(record),), id=f"{page}-comm", level=3))
        kinds = dict.fromkeys(c.kind for c in record.collectives)
        formulas = "; ".join(f"{kind}: {TRAFFIC_FORMULAS[kind]}" for kind in kinds if kind in TRAFFIC_FORMULAS)
        blocks.append(Paragraph(pieces(f"bytes per device, ring-algorithm estimates for a group of N: {formulas}",
                                       "jitscope.muted")))
    else:
        blocks.append(Paragraph(pieces("no collectives: every device works on its own data", "jitscope.muted")))
    note = f"{record.devices} devices; memory analysis is per device"
    return Section("sharding", tuple(blocks), note, id=f"{page}-sharding")


def communication_split(ops: Sequence[OpRecord]) -> Section | None:
    """``profile`` of a sharded program: device time in collectives against compute, copies and control.

    None when no collective ran (an unsharded program). Times are per call, summed over the
    devices that ran each op, so shares compare like with like.
    """
    by_class: dict[str, float] = {}
    for op in ops:
        by_class[op.category] = by_class.get(op.category, 0.0) + op.seconds
    if not by_class.get("collective"):
        return None
    total = sum(by_class.values()) or 1.0
    names = {"collective": "communication (collectives)", "compute": "compute", "copy": "copies",
             "control": "control flow"}
    rows = tuple((names.get(kind, kind), fmt_duration(seconds), fmt_share(seconds, total))
                 for kind, seconds in sorted(by_class.items(), key=lambda kv: -kv[1]))
    columns = (Column("device time"), Column("per call", "right"), Column("share", "right"))
    return Section("compute and communication", (Table(columns, rows),),
                   "summed over devices; collectives include waiting for the slowest device", id="profile-comm")
