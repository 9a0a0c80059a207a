"""The jaxpr by line of the user's code: equations (library internals counted at the user's line that
called them), primitives, library calls, and the compiled module's FLOPs and bytes (``line_costs``).

Pure: records in, records out. Equations count once per place a nested jaxpr is used (a jit called
twice counts twice), never per loop iteration, as ``model.jaxpr.summarize`` counts them, so the
lines' equations add up to the header's "with nested" total.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from jitscope.model.common import Location
from jitscope.model.jaxpr import JaxprRecord
from jitscope.model.trace import SourceLineRecord
from jitscope.userframes import library_call_name

LineKey = tuple[str, int]


def line_key(location: Location | None) -> LineKey | None:
    return None if location is None else (location.file, location.line)


@dataclass
class _Line:
    location: Location | None
    eqns: int = 0
    library: int = 0
    primitives: Counter[str] = field(default_factory=Counter)
    calls: dict[str, None] = field(default_factory=dict)  # ordered set

    def merge(self, other: _Line, times: int = 1) -> None:
        self.eqns += other.eqns * times
        self.library += other.library * times
        for name, n in other.primitives.items():
            self.primitives[name] += n * times
        self.calls.update(other.calls)


Table = dict[LineKey | None, _Line]


def _tally(record: JaxprRecord, shared: dict[str, Table]) -> Table:
    """Per line: what ``record`` and the jaxprs nested in it hold (a shared jaxpr's table is made once)."""
    if record.shared_name and record.shared_name in shared:
        return shared[record.shared_name]
    table: Table = {}
    for eqn in record.eqns:
        key = line_key(eqn.location)
        line = table.get(key)
        if line is None:
            where = eqn.location
            line = table[key] = _Line(where and Location(where.file, where.line, where.function))
        line.eqns += 1
        line.primitives[eqn.primitive] += 1
        if eqn.library is not None:
            line.library += 1
            if eqn.library_call is not None:
                package, function = library_call_name(eqn.library_call.file, eqn.library_call.function)
                line.calls[f"{package} {function}"] = None
        for _, sub in eqn.subjaxprs:
            for inner_key, inner in _tally(sub, shared).items():
                # What a nested jaxpr's equations could not place (a jaxpr shared by several calls has
                # no single call site) belongs to the line of the equation that runs it.
                target = inner_key if inner_key is not None else key
                mine = table.get(target)
                if mine is None:
                    mine = table[target] = _Line(inner.location)
                mine.merge(inner)
    if record.shared_name:
        shared[record.shared_name] = table
    return table


def source_lines(record: JaxprRecord,
                 costs: Mapping[LineKey | None, tuple[float, float]] | None = None) -> tuple[SourceLineRecord, ...]:
    """One record per line of the user's code (and one, ``location=None``, for what no line of theirs made),
    most FLOPs first when ``costs`` (``line_costs``) are given, else most equations first."""
    table = _tally(record, {})
    rows = []
    for key in dict.fromkeys([*table, *(costs or {})]):
        line = table.get(key) or _Line(None if key is None else Location(key[0], key[1]))
        flops, nbytes = costs.get(key, (0.0, 0.0)) if costs is not None else (None, None)
        if not line.eqns and not flops and not nbytes:  # parameters and constants: nothing made, nothing done
            continue
        rows.append(SourceLineRecord(
            location=line.location,
            eqns=line.eqns,
            library_eqns=line.library,
            primitives=tuple(sorted(line.primitives.items(), key=lambda kv: (-kv[1], kv[0]))),
            calls=tuple(line.calls),
            flops=flops,
            bytes=nbytes,
        ))
    rows.sort(key=lambda r: (r.location is None, -(r.flops or 0.0), -r.eqns))
    return tuple(rows)
