"""The collectives of an optimised (SPMD-partitioned) HLO module, read from its text.

Pure text analysis: the HLO printed by ``compiled.as_text()``, one module whose shapes are
per device. For each collective instruction we keep its kind, per-device result shape,
replica groups (both the explicit ``{{0,1},{2,3}}`` and the iota ``[2,4]<=[4,2]T(1,0)``
forms), whether it runs inside a while-loop body, and the user's source line, from
``source_file``/``source_line`` metadata (older XLA) or ``stack_frame_id`` and the
``FileNames``/``FileLocations``/``StackFrames`` tables newer XLA prints before the
computations. Async pairs (``all-gather-start``/``-done``) count once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

#: Bytes per element of HLO element types.
_ELEMENT_BYTES: dict[str, float] = {
    "pred": 1, "s4": 0.5, "u4": 0.5, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
    "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}  # fmt: skip
_HLO_TO_SHORT = {"s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64", "pred": "bool"}

_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute", "collective-broadcast")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*?)\s+([a-z][\w\-]*)\((.*)$")
_ARRAY = re.compile(r"([a-z]+\d*(?:e\d+m\d+\w*)?)\[([\d,]*)\]")
_COMPUTATION = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*(?:\(.*\))?.*\{\s*$")
_CALLED = re.compile(r"\b(?:calls|to_apply|body|condition|branch_computations|called_computations)="
                     r"(\{[^}]*\}|%?[\w.\-]+)")
_NAME = re.compile(r"%?([\w.\-]+)")
_IOTA_GROUPS = re.compile(r"replica_groups=\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?")
_LIST_GROUPS = re.compile(r"replica_groups=\{((?:\{[\d,]*\},?)*)\}")
_MESH_GROUPS = re.compile(r"replica_groups=mesh\[([^\]]*)\]\s*\{([^}]*)\}")
_PAIRS = re.compile(r"source_target_pairs=\{((?:\{\d+,\d+\},?)*)\}")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_SOURCE = re.compile(r'source_file="((?:[^"\\]|\\.)*)"\s+source_line=(\d+)')
_FRAME_ID = re.compile(r"stack_frame_id=(\d+)")
_TABLE_ROW = re.compile(r"^(\d+)\s+(.*)$")
_FIELD = re.compile(r"(\w+)=(\d+)")


@dataclass(frozen=True, slots=True)
class HloCollective:
    """One collective as found in the text (before mesh axes and traffic are worked out)."""

    kind: str
    name: str
    dtype: str  # short name
    shape: tuple[int, ...]
    result_bytes: int
    groups: tuple[tuple[int, ...], ...]  # () = one group of every device, or given by mesh_axes
    #: Newer XLA names the groups by mesh axes (``mesh['axis_0'=4,'axis_1'=2] {'axis_1'}``): their positions.
    mesh_axes: tuple[int, ...] | None
    is_async: bool
    in_loop: bool
    computation: str
    op_name: str
    file: str
    line: int
    operand: str  # first operand's instruction name
    arrays: int = 1


@dataclass
class HloModule:
    """What the analysis needs from a module's text: collectives, entry parameters, and operand links."""

    collectives: list[HloCollective] = field(default_factory=list)
    #: Entry parameter instruction name -> the argument it is (JAX's op_name metadata: "params['w']").
    parameters: dict[str, str] = field(default_factory=dict)
    #: Instruction -> (opcode, first operand), to see through copies and bitcasts to a parameter.
    producers: dict[str, tuple[str, str]] = field(default_factory=dict)

    def parameter_of(self, name: str, hops: int = 4) -> str | None:
        """The entry parameter ``name`` is (or a copy/bitcast/reshape/convert of), if any."""
        for _ in range(hops + 1):
            if name in self.parameters:
                return self.parameters[name]
            opcode, operand = self.producers.get(name, ("", ""))
            if opcode not in ("copy", "bitcast", "reshape", "convert", "transpose", "fusion") or not operand:
                return None
            name = operand
        return None


def element_bytes(dtype: str) -> float:
    if dtype.startswith("f8"):
        return 1
    return _ELEMENT_BYTES.get(dtype, 4)


def _arrays(type_text: str) -> list[tuple[str, tuple[int, ...]]]:
    return [(m.group(1), tuple(int(d) for d in m.group(2).split(",") if d)) for m in _ARRAY.finditer(type_text)]


def _nbytes(arrays: list[tuple[str, tuple[int, ...]]]) -> int:
    return int(sum(math.ceil(math.prod(shape) * element_bytes(dtype)) for dtype, shape in arrays))


def iota_groups(n_groups: int, size: int, dims: tuple[int, ...], perm: tuple[int, ...] | None) -> tuple[tuple[int, ...], ...]:
    """Expand XLA's iota replica groups ``[G,S]<=[dims]T(perm)``."""
    import numpy as np

    ids = np.arange(math.prod(dims)).reshape(dims)
    if perm:
        ids = ids.transpose(perm)
    return tuple(tuple(int(i) for i in row) for row in ids.reshape(n_groups, size))


def parse_mesh_axes(attrs: str) -> tuple[int, ...] | None:
    """Positions of the mesh axes a ``replica_groups=mesh[...] {'axis_1'}`` collective spans, or None."""
    match = _MESH_GROUPS.search(attrs)
    if match is None:
        return None
    names = re.findall(r"'([^']+)'\s*=", match.group(1))
    used = re.findall(r"'([^']+)'", match.group(2))
    return tuple(names.index(u) for u in used if u in names)


def parse_groups(attrs: str) -> tuple[tuple[int, ...], ...]:
    iota = _IOTA_GROUPS.search(attrs)
    if iota is not None:
        dims = tuple(int(d) for d in iota.group(3).split(","))
        perm = tuple(int(d) for d in iota.group(4).split(",")) if iota.group(4) else None
        return iota_groups(int(iota.group(1)), int(iota.group(2)), dims, perm)
    listed = _LIST_GROUPS.search(attrs)
    if listed is not None:
        return tuple(tuple(int(i) for i in g.split(",") if i) for g in re.findall(r"\{([\d,]*)\}", listed.group(1))
                     if g)
    pairs = _PAIRS.search(attrs)
    if pairs is not None:
        return tuple(tuple(int(i) for i in p.split(",")) for p in re.findall(r"\{(\d+,\d+)\}", pairs.group(1)))
    return ()


class _FrameTables:
    """XLA's stack-frame tables: frame id -> (file, line, parent frame id)."""

    def __init__(self) -> None:
        self.files: dict[int, str] = {}
        self.locations: dict[int, tuple[int, int]] = {}
        self.frames: dict[int, tuple[int, int]] = {}

    def add(self, table: str, row: str) -> None:
        match = _TABLE_ROW.match(row.strip())
        if match is None:
            return
        key, rest = int(match.group(1)), match.group(2)
        fields = {k: int(v) for k, v in _FIELD.findall(rest)}
        if table == "FileNames":
            self.files[key] = rest.strip().strip('"')
        elif table == "FileLocations":
            self.locations[key] = (fields.get("file_name_id", 0), fields.get("line", 0))
        elif table == "StackFrames":
            self.frames[key] = (fields.get("file_location_id", 0), fields.get("parent_frame_id", 0))

    def user_line(self, frame: int, is_user_file: Callable[[str], bool]) -> tuple[str, int]:
        """The innermost frame in user code, walking out through parents."""
        seen: set[int] = set()
        first: tuple[str, int] = ("", 0)
        while frame in self.frames and frame not in seen:
            seen.add(frame)
            location, parent = self.frames[frame]
            file_id, line = self.locations.get(location, (0, 0))
            file = self.files.get(file_id, "")
            if not first[0]:
                first = (file, line)
            if file and is_user_file(file):
                return file, line
            frame = parent
        return first


def _tables(lines: list[str]) -> _FrameTables:
    tables = _FrameTables()
    current = ""
    for line in lines:
        stripped = line.strip()
        if stripped in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            current = stripped
            continue
        if current and stripped and stripped[0].isdigit():
            tables.add(current, stripped)
        elif current and not stripped:
            continue
        else:
            current = ""
    return tables


def _computations(lines: list[str]) -> Iterator[tuple[str, bool, list[str]]]:
    name, entry = "", False
    body: list[str] = []
    for line in lines:
        if not name:
            match = _COMPUTATION.match(line)
            if match is not None and "=" not in line.split("{")[0].split("(")[0]:
                name, entry, body = match.group(2), bool(match.group(1)), []
            continue
        if line.strip() == "}":
            yield name, entry, body
            name = ""
            continue
        body.append(line)


def _loop_computations(calls: dict[str, set[str]], loop_roots: set[str]) -> set[str]:
    inside, todo = set(), list(loop_roots)
    while todo:
        comp = todo.pop()
        if comp in inside:
            continue
        inside.add(comp)
        todo.extend(calls.get(comp, ()))
    return inside


def parse_hlo(text: str, is_user_file: Callable[[str], bool]) -> HloModule:
    """Collectives, entry parameters and producers of an optimised HLO module's text."""
    lines = text.splitlines()
    tables = _tables(lines)
    comps = list(_computations(lines))
    calls: dict[str, set[str]] = {}
    loop_roots: set[str] = set()
    for comp, _, body in comps:
        for line in body:
            for group in _CALLED.findall(line):
                calls.setdefault(comp, set()).update(_NAME.findall(group))
            body_of = re.search(r"\bbody=%?([\w.\-]+)", line)
            if body_of is not None and " while(" in line:
                loop_roots.add(body_of.group(1))
    in_loop = _loop_computations(calls, loop_roots)
    module = HloModule()
    starts: dict[str, tuple[str, str, str, str]] = {}  # start name -> (kind, attrs, computation, type)
    for comp, entry, body in comps:
        for line in body:
            match = _INSTRUCTION.match(line)
            if match is None:
                continue
            name, type_text, opcode, rest = match.groups()
            inside = rest.split(")")[0] if rest else ""
            operands = re.findall(r"%([\w.\-]+)", inside) or _NAME.findall(inside)
            operand = operands[0] if operands else ""
            module.producers[name] = (opcode, operand)
            if entry and opcode == "parameter":
                label = _OP_NAME.search(rest)
                number = re.match(r"\s*(\d+)", rest)
                module.parameters[name] = (label.group(1).replace("\\'", "'") if label
                                           else f"parameter {number.group(1) if number else '?'}")
            kind = opcode.removesuffix("-start").removesuffix("-done")
            if kind not in _KINDS:
                continue
            if opcode.endswith("-start"):
                starts[name] = (kind, rest, comp, operand)
                continue
            attrs, start_name = rest, name
            if opcode.endswith("-done"):
                if operand not in starts:
                    continue
                start_name = operand
                kind, attrs, _, operand = starts.pop(start_name)
            arrays = _arrays(type_text)
            dtype, shape = arrays[0] if arrays else ("", ())
            op_name = _OP_NAME.search(attrs)
            source = _SOURCE.search(attrs)
            file, line_no = (source.group(1), int(source.group(2))) if source else ("", 0)
            if source is None:
                frame = _FRAME_ID.search(attrs)
                if frame is not None:
                    file, line_no = tables.user_line(int(frame.group(1)), is_user_file)
            module.collectives.append(HloCollective(
                kind=kind, name=start_name, dtype=_HLO_TO_SHORT.get(dtype, dtype), shape=shape,
                result_bytes=_nbytes(arrays), groups=parse_groups(attrs), mesh_axes=parse_mesh_axes(attrs),
                is_async=opcode.endswith("-done"),
                in_loop=comp in in_loop, computation=comp, op_name=op_name.group(1) if op_name else "",
                file=file, line=line_no, operand=operand, arrays=max(1, len(arrays))))
    return module
