"""The optimised HLO of both sides, compared structurally.

XLA renames instructions on every edit (``fusion.12`` becomes ``fusion.13``), so instructions are
matched by what they are: opcode, result shape, the jaxpr primitive JAX's ``op_name`` metadata names,
what a fusion fuses, and whether it runs inside a loop body. Instructions are counted as a multiset on
each side; the difference is what the change added or removed. Fused computations, reducers and other
nested computations are not listed on their own: a fusion stands for what it fuses, a ``while`` for
its body's instructions (listed as in a loop).

Each instruction is put on a line of the user's code: the ``source_file``/``source_line`` metadata
where XLA keeps it (older XLA); otherwise the equations of the side's jaxpr with the same primitive
(and result shape), preferring the lines the jaxpr diff found changed.

The module is parsed by ``jitscope.profiling.hlo`` (the one HLO reader).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from jitscope.comparison.jaxpr import FlatEqn
from jitscope.model.diff import CollectiveChange, HloChange
from jitscope.model.sharding import COLLECTIVE_KINDS, Collective
from jitscope.profiling.hlo import FREE_OPCODES, HloModule, Instruction, Shape, parse_module

#: Not listed: bookkeeping, and the second half of async pairs (the ``-start`` stands for both).
_HIDDEN = FREE_OPCODES | {"copy-done", "all-gather-done", "all-reduce-done", "collective-permute-done",
                          "async-done", "async-update", "send-done", "recv-done"}
#: Instructions whose called computations run as part of the program at the same loop depth.
_CALLERS = frozenset({"call", "conditional", "async-start"})
#: HLO's element type names for JAX's short dtype names where they differ.
_HLO_DTYPE = {"bool": "pred", "i8": "s8", "i16": "s16", "i32": "s32", "i64": "s64", "i4": "s4", "i2": "s2"}

Key = tuple[str, str, str, str, bool]  # opcode, shape, primitive, fused, in_loop


@dataclass(frozen=True, slots=True)
class Op:
    """One listed instruction: its matching key and where its source is."""

    opcode: str
    shape: str
    primitive: str
    fused: str
    in_loop: bool
    instruction: Instruction

    @property
    def key(self) -> Key:
        return self.opcode, self.shape, self.primitive, self.fused, self.in_loop


@dataclass(frozen=True, slots=True)
class ModuleOps:
    ops: tuple[Op, ...]
    #: Every operation, fused or not (opcodes), to tell "fused differently" from "computes differently".
    leaves: Counter[str]
    fusions: int


def shape_text(shape: Shape) -> str:
    arrays = [f"{dtype}[{','.join(map(str, dims))}]" for dtype, dims in shape.arrays]
    return arrays[0] if len(arrays) == 1 else f"({', '.join(arrays)})"


def primitive_of(op_name: str) -> str:
    """``jit(f)/transpose(jvp(f))/dot_general`` -> ``dot_general``."""
    last = op_name.rsplit("/", 1)[-1]
    return last.split("[", 1)[0] if "(" not in last else ""


def module_ops(text: str) -> ModuleOps:
    """The instructions of ``text`` that run, in order, with fused and nested computations folded in."""
    module = parse_module(text)
    out: list[Op] = []
    leaves: Counter[str] = Counter()
    fusions = 0
    todo = [(module.entry.name, False)]
    seen: set[str] = set()
    while todo:
        name, in_loop = todo.pop(0)
        if name in seen or name not in module.computations:
            continue
        seen.add(name)
        for ins in module.computations[name].instructions:
            if ins.opcode == "while":
                todo += [(c, True) for c in ins.calls]
            elif ins.opcode in _CALLERS:
                todo += [(c, in_loop) for c in ins.calls]
            if ins.opcode in _HIDDEN:
                continue
            fused = ""
            if ins.opcode == "fusion":
                fusions += 1
                inner = _fused_opcodes(module, ins)
                leaves.update(inner)
                fused = ", ".join(sorted(inner))
            elif ins.opcode not in ("while", *_CALLERS):
                leaves[ins.opcode] += 1
            out.append(Op(ins.opcode, shape_text(ins.shape), primitive_of(ins.op_name), fused, in_loop, ins))
    return ModuleOps(tuple(out), leaves, fusions)


def _fused_opcodes(module: HloModule, fusion: Instruction) -> Counter[str]:
    out: Counter[str] = Counter()
    todo = list(fusion.calls)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in module.computations:
            continue
        seen.add(name)
        for ins in module.computations[name].instructions:
            if ins.opcode == "fusion":
                todo += ins.calls
            elif ins.opcode not in _HIDDEN:
                out[ins.opcode] += 1
    return out


Locate = Callable[[Op, Collection[tuple[str, int]]], tuple[str, int]]


def locator(by_primitive: Mapping[str, Sequence[FlatEqn]], relative: Callable[[str], str]) -> Locate:
    """How an instruction finds its user line on one side (see the module docstring)."""

    def locate(op: Op, preferred: Collection[tuple[str, int]]) -> tuple[str, int]:
        source = op.instruction.source
        if source is not None and source.line:
            return relative(source.file), source.line
        candidates = list(by_primitive.get(op.primitive, ()))
        if not candidates:
            return "", 0
        same_shape = [e for e in candidates if any(_hlo_shape(s) == op.shape for s in e.out_shapes)]
        for pool in (same_shape, candidates):
            chosen = next((e for e in pool if (e.file, e.line) in preferred), None)
            if chosen is not None:
                return chosen.file, chosen.line
        first = (same_shape or candidates)[0]
        return first.file, first.line

    return locate


def _hlo_shape(aval: str) -> str:
    dtype, bracket, rest = aval.partition("[")
    if dtype.startswith(("f8_", "f4_")):  # JAX's f8_e4m3fn is HLO's f8e4m3fn
        dtype = dtype.replace("_", "", 1)
    return f"{_HLO_DTYPE.get(dtype, dtype)}{bracket}{rest}"


@dataclass(frozen=True, slots=True)
class HloDiff:
    changes: tuple[HloChange, ...]
    matched: int
    fusion_note: str


def diff_modules(old: ModuleOps, new: ModuleOps, locate_old: Locate, locate_new: Locate,
                 old_preferred: Collection[tuple[str, int]] = (),
                 new_preferred: Collection[tuple[str, int]] = ()) -> HloDiff:
    """Instructions only on one side, as multisets of their keys."""
    a = Counter(op.key for op in old.ops)
    b = Counter(op.key for op in new.ops)
    changes: list[HloChange] = []
    for kind, extra, ops, locate, preferred in (("removed", a - b, old.ops, locate_old, old_preferred),
                                                ("added", b - a, new.ops, locate_new, new_preferred)):
        for key, count in extra.items():
            example = next(op for op in reversed(ops) if op.key == key)
            file, line = locate(example, preferred)
            changes.append(HloChange(kind=kind, opcode=example.opcode, shape=example.shape,  # type: ignore[arg-type]
                                     primitive=example.primitive, fused=example.fused, count=count,
                                     in_loop=example.in_loop, file=file, line=line))
    changes.sort(key=lambda c: (c.file, c.line, c.kind != "removed", c.opcode))
    note = ""
    if changes and old.leaves == new.leaves and old.fusions != new.fusions:
        verb = "merged" if new.fusions < old.fusions else "split"
        note = f"the same operations, fused differently: {old.fusions} fusions -> {new.fusions} ({verb})"
    return HloDiff(tuple(changes), sum((a & b).values()), note)


def diff_collectives(old: Sequence[Collective], new: Sequence[Collective],
                     relative_old: Callable[[str], str], relative_new: Callable[[str], str]) -> tuple[CollectiveChange, ...]:
    """Collectives only on one side, matched by kind, type, shape and loop nesting (not by name)."""

    def key(c: Collective) -> tuple[str, str, tuple[int, ...], bool]:
        return c.kind, c.dtype, c.shape, c.in_loop

    a, b = Counter(key(c) for c in old), Counter(key(c) for c in new)
    out: list[CollectiveChange] = []
    for kind, extra, items, relative in (("removed", a - b, old, relative_old), ("added", b - a, new, relative_new)):
        for k, count in extra.items():
            c = next(c for c in reversed(items) if key(c) == k)
            out.append(CollectiveChange(kind=kind, collective=c.kind, dtype=c.dtype, shape=c.shape,  # type: ignore[arg-type]
                                        send_bytes=c.send_bytes, recv_bytes=c.recv_bytes, in_loop=c.in_loop,
                                        file=relative(c.file) if c.file else "", line=c.line, count=count))
    order = {kind: i for i, kind in enumerate(COLLECTIVE_KINDS)}
    out.sort(key=lambda c: (c.kind != "added", order.get(c.collective, 99), c.file, c.line))
    return tuple(out)
