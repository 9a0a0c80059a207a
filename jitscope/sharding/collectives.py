"""The collectives of an optimised (SPMD-partitioned) HLO module, read from its text.

Pure text analysis on top of ``profiling.hlo.parse_module`` (the one HLO reader): the module
printed by ``compiled.as_text()``, whose shapes are per device. For each collective
instruction we keep its kind, per-device result shape, replica groups (the explicit
``{{0,1},{2,3}}``, the iota ``[2,4]<=[4,2]T(1,0)`` and the mesh-axis
``mesh['axis_0'=4,'axis_1'=2] {'axis_1'}`` forms), whether it runs inside a while-loop
body, and the user's source line (the innermost user frame of the instruction's stack).
Async pairs (``all-gather-start``/``-done``) count once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from jitscope.model.sharding import COLLECTIVE_KINDS
from jitscope.profiling.hlo import HloModule as ParsedModule
from jitscope.profiling.hlo import Instruction, parse_module

_HLO_TO_SHORT = {"s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64", "pred": "bool"}
_IOTA_GROUPS = re.compile(r"replica_groups=\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?")
_LIST_GROUPS = re.compile(r"replica_groups=\{((?:\{[\d,]*\},?)*)\}")
_MESH_GROUPS = re.compile(r"replica_groups=mesh\[([^\]]*)\]\s*\{([^}]*)\}")
_PAIRS = re.compile(r"source_target_pairs=\{((?:\{\d+,\d+\},?)*)\}")


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
class ModuleCollectives:
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


def _loop_computations(module: ParsedModule) -> set[str]:
    """Computations that run inside a while loop: its body and condition, and all they call."""
    calls = {name: {c for i in comp.instructions for c in i.calls} for name, comp in module.computations.items()}
    todo = [c for comp in module.computations.values() for i in comp.instructions if i.opcode == "while"
            for c in i.calls]
    inside: set[str] = set()
    while todo:
        comp = todo.pop()
        if comp not in inside:
            inside.add(comp)
            todo.extend(calls.get(comp, ()))
    return inside


def _user_line(module: ParsedModule, instruction: Instruction, is_user_file: Callable[[str], bool]) -> tuple[str, int]:
    stack = module.stack(instruction)
    chosen = next((loc for loc in stack if is_user_file(loc.file)), stack[0] if stack else None)
    return (chosen.file, chosen.line) if chosen is not None else ("", 0)


def parse_hlo(text: str, is_user_file: Callable[[str], bool]) -> ModuleCollectives:
    """Collectives, entry parameters and producers of an optimised HLO module's text."""
    parsed = parse_module(text)
    in_loop = _loop_computations(parsed)
    module = ModuleCollectives()
    starts: dict[str, Instruction] = {}
    for comp in parsed.computations.values():
        for ins in comp.instructions:
            operand = ins.operands[0] if ins.operands else ""
            module.producers[ins.name] = (ins.opcode, operand)
            if comp.is_entry and ins.opcode == "parameter":
                number = re.match(r"\s*(\d+)", ins.attrs)
                module.parameters[ins.name] = (ins.op_name.replace("\\'", "'") if ins.op_name
                                               else f"parameter {number.group(1) if number else '?'}")
            kind = ins.opcode.removesuffix("-start").removesuffix("-done")
            if kind not in COLLECTIVE_KINDS:
                continue
            if ins.opcode.endswith("-start"):
                starts[ins.name] = ins
                continue
            first = ins
            if ins.opcode.endswith("-done"):
                if operand not in starts:
                    continue
                first = starts.pop(operand)
            attrs = first.attrs
            dtype, shape = ins.shape.arrays[0] if ins.shape.arrays else ("", ())
            file, line = _user_line(parsed, first, is_user_file)
            module.collectives.append(HloCollective(
                kind=kind, name=first.name, dtype=_HLO_TO_SHORT.get(dtype, dtype), shape=shape,
                result_bytes=math.ceil(ins.shape.nbytes), groups=parse_groups(attrs), mesh_axes=parse_mesh_axes(attrs),
                is_async=first is not ins, in_loop=comp.name in in_loop, computation=comp.name,
                op_name=first.op_name, file=file, line=line, operand=first.operands[0] if first.operands else "",
                arrays=max(1, len(ins.shape.arrays))))
    return module
