"""What an executed HLO instruction ran: the instructions inside it, each with its share of the work and its FLOPs,
and the stack a metadata-less ``reduce-window`` inherits from the ``reduce`` it feeds.

Shared by device-time attribution (``attribute.py``), XLA's FLOPs and bytes by line (``line_costs.py``, on
every ``jitscope trace``) and peak memory by line (``buffers/sources.py``); it needs only the HLO reader,
so ``jitscope trace`` does not import the profiler's capture reading to split costs over lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from jitscope.model.common import Location
from jitscope.profiling.hlo import FREE_OPCODES, MOVE_OPCODES, HloModule, Instruction, instruction_flops


@dataclass(frozen=True, slots=True)
class Part:
    """One instruction an executed op ran, its weight in the op's time, and its FLOPs."""

    instruction: Instruction
    weight: float
    flops: float


#: Executed ops whose work is the computations they call, when those have no events of their own.
CALLING = ("fusion", "call")
#: Inside such an op, instructions whose work is in the computations they call (a loop run by a call thunk).
NESTING = ("fusion", "call", "while", "conditional")


def parts(op: Instruction, module: HloModule, top: bool = True) -> list[Part]:
    """The instructions ``op`` ran, with weights (a fusion's fused instructions, recursively; else ``op``).

    A ``while`` executed as its own thunk or kernels is itself (its body's ops are events of their
    own); inside a fusion or call, a loop's body is walked once (its trip count is not known).
    """
    if (top and op.opcode not in CALLING) or not any(c in module.computations for c in op.calls):
        return [Part(op, 1.0, instruction_flops(op, module, _operands(op, module)))]
    out: list[Part] = []
    for name in op.calls:
        computation = module.computations.get(name)
        if computation is None:
            continue
        operands = computation.by_name()
        for inner in computation.instructions:
            if inner.opcode in FREE_OPCODES:
                continue
            if inner.opcode in NESTING and inner.calls:
                out.extend(parts(inner, module, top=False))
                continue
            flops = instruction_flops(inner, module, operands)
            scalar_broadcast = inner.opcode == "broadcast" and all(
                operands[o].shape.rank == 0 for o in inner.operands if o in operands)
            weight = 0.0 if scalar_broadcast else flops if inner.opcode not in MOVE_OPCODES else inner.shape.elements
            out.append(Part(inner, max(weight, 0.0), flops))
    if not out:
        return [Part(op, 1.0, 0.0)]
    if sum(p.weight for p in out) <= 0:  # nothing to weigh by: equal shares
        out = [Part(p.instruction, 1.0, p.flops) for p in out]
    return out


def fed_reduce_stack(op: Instruction, module: HloModule) -> tuple[Location, ...]:
    """The stack of the ``reduce`` that a metadata-less ``reduce-window`` feeds, else ().

    XLA's CPU tree-reduction rewrite (JAX 0.4.38-0.6.x) splits a large reduce into a
    reduce-window and a smaller reduce and gives the reduce-window no metadata; on those versions
    the parallel task assigner may also move it into a computation of its own, run by a ``call``.
    Its work is the reduce's (a ``jnp.mean``, a ``sum``), so it goes to the reduce's line (the
    reduce may be fused into the instruction that reads the reduce-window).
    """
    if op.opcode != "reduce-window":
        return ()
    instructions = module.instructions()
    name, computation = op.name, instructions[op.name][1] if op.name in instructions else None
    if computation is not None and op.is_root and not computation.is_entry:
        caller = next((i for c in module.computations.values() for i in c.instructions
                       if i.opcode == "call" and computation.name in i.calls), None)
        name, computation = (caller.name, instructions[caller.name][1]) if caller is not None else ("", None)
    for user in computation.instructions if computation is not None else ():
        if name not in user.operands:
            continue
        # The reduce itself, or a fusion the reduce was fused into.
        inner = [user] if user.opcode == "reduce" else [
            i for c in user.calls if c in module.computations and user.opcode == "fusion"
            for i in module.computations[c].instructions if i.opcode == "reduce"]
        stack = next((module.stack(i) for i in inner if module.stack(i)), ())
        if stack:
            return stack
    return ()


def _operands(op: Instruction, module: HloModule) -> dict[str, Instruction]:
    for computation in module.computations.values():
        names = computation.by_name()
        if names.get(op.name) is op:
            return names
    return {}
