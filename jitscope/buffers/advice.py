"""What could be changed: activations saved for the backward pass (residuals), and arguments worth donating.

Residuals: JAX names the backward pass's instructions ``transpose(jvp(...))`` in their op_name; a
value made outside it (the forward pass) that an instruction of the backward pass reads, directly or
through tuples and loops, is kept from one to the other. ``jax.checkpoint`` around the code that made
it recomputes it in the backward pass instead, so (an estimate, and an upper bound) the residual
bytes live at the peak are what checkpointing their line frees there; the inputs needed to recompute
them stay live, which the estimate leaves out.

Donation: an argument that is not donated and has the shape and element type of an output. With
``donate_argnums`` XLA may write that output into the argument's buffer: one output buffer less.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from jitscope.buffers.liveness import LiveSet, Slot
from jitscope.buffers.sources import Sources
from jitscope.jaxcompat.buffer_assignment import OUTPUT, PARAMETER, TEMPORARY, AllocatedValue, Allocation
from jitscope.model.common import Location
from jitscope.model.memory import DonationCandidate, ResidualLine
from jitscope.profiling.hlo import HloModule, Instruction

BACKWARD = "transpose("
#: Users followed to find the backward pass's reader of a value (data passed on unchanged).
_PASSING = frozenset({"tuple", "get-tuple-element", "bitcast", "copy", "opt-barrier", "parameter"})
_HOPS = 6
#: Primitives that are matmuls or convolutions: ``dots_saveable`` keeps them, so recomputing needs another policy.
_DOTS = ("dot_general", "conv_general_dilated", "dot")
_ALIAS = re.compile(r"\{([\d,]*)\}:\s*\((\d+),")


#: Told when a module has a backward pass (``add_any`` only comes from transposing) that op names do not mark.
UNMARKED = ("this JAX's HLO metadata does not mark the backward pass (no transpose(...) in op names, as on "
            "jax 0.4.x): residuals are not shown")


def unmarked_backward(module: HloModule) -> bool:
    names = [i.op_name for c in module.computations.values() for i in c.instructions]
    return not any(BACKWARD in n for n in names) and any(n.endswith("/add_any") for n in names)


def _users(module: HloModule) -> dict[str, list[Instruction]]:
    users: dict[str, list[Instruction]] = defaultdict(list)
    for computation in module.computations.values():
        for instruction in computation.instructions:
            for operand in instruction.operands:
                users[operand].append(instruction)
            if instruction.opcode in ("while", "call", "conditional"):
                # a value passed into a loop or call reaches its computations' parameters
                for name in instruction.calls:
                    inner = module.computations.get(name)
                    for param in (i for i in inner.instructions if i.opcode == "parameter") if inner else ():
                        for operand in instruction.operands:
                            users[operand].append(param)
    return users


def _read_by_backward(name: str, users: dict[str, list[Instruction]], sources: Sources) -> bool:
    frontier, seen = [name], {name}
    for _ in range(_HOPS):
        following: list[str] = []
        for current in frontier:
            for user in users.get(current, ()):
                if BACKWARD in sources.op_name(user.name):
                    return True
                if user.opcode in _PASSING and user.name not in seen:
                    seen.add(user.name)
                    following.append(user.name)
        frontier = following
    return False


def residual_slots(live: LiveSet, module: HloModule, sources: Sources) -> dict[int, AllocatedValue]:
    """``id`` of each slot holding a value the forward pass made and the backward pass reads -> that value."""
    if BACKWARD not in "".join(i.op_name for c in module.computations.values() for i in c.instructions):
        return {}
    users = _users(module)
    found: dict[int, AllocatedValue] = {}
    for slot in live.slots:
        if slot.allocation.kind not in (TEMPORARY, OUTPUT):
            continue
        for value in slot.values:
            op_name = sources.op_name(value.instruction)
            if value.phi or not op_name or BACKWARD in op_name:
                continue
            if _read_by_backward(value.instruction, users, sources):
                found[id(slot)] = value
                break
    return found


def residual_lines(live: LiveSet, residuals: dict[int, AllocatedValue], sources: Sources) -> tuple[ResidualLine, ...]:
    at_peak = {id(slot) for slot, _ in live.live}
    table: dict[Location, list[tuple[Slot, str]]] = defaultdict(list)
    inside: dict[Location, bool] = {}
    for slot in live.slots:
        if id(slot) not in residuals:
            continue
        value = residuals[id(slot)]
        source = sources.source(value.instruction)
        where = source.helper or source.location  # the line that made it: where jax.checkpoint would go
        if where is None:
            continue
        table[where].append((slot, source.primitive))
        inside[where] = source.in_function
    out = []
    for location, held in table.items():
        primitives = tuple(dict.fromkeys(p for _, p in held if p))
        dots = any(p in _DOTS for p in primitives)
        policy = "nothing_saveable" if dots else "dots_saveable"
        out.append(ResidualLine(location, sum(s.size for s, _ in held),
                                sum(s.size for s, _ in held if id(s) in at_peak), len(held), primitives, policy,
                                inside[location]))
    out.sort(key=lambda r: (-r.at_peak, -r.bytes))
    return tuple(out)


def _aliased_outputs(header: str) -> set[int]:
    """Entry parameters that ``input_output_alias`` gives an output to (donated and used)."""
    match = re.search(r"input_output_alias=\{(.*?)\}\s*(?:,\s*\w+=|$)", header)
    return {int(p) for _, p in _ALIAS.findall(match.group(1))} if match else set()


def donation_candidates(allocations: Iterable[Allocation], module: HloModule, sources: Sources,
                        header: str) -> tuple[DonationCandidate, ...]:
    """Arguments not donated whose shape and dtype match a distinct output's."""
    root = next((i for i in module.entry.instructions if i.is_root), None)
    if root is None:
        return ()
    outputs = list(root.shape.arrays)
    donated = _aliased_outputs(header)
    parameters: dict[int, Allocation] = {}
    for allocation in allocations:
        if allocation.kind == PARAMETER and allocation.parameter is not None:
            if allocation.live_out:
                donated.add(allocation.parameter)
            parameters.setdefault(allocation.parameter, allocation)
    entry = {i.name: i for i in module.entry.instructions if i.opcode == "parameter"}
    # outputs already written into a donated argument are not free to match again
    for number in sorted(donated):
        given = parameters.get(number)
        value = next((v for v in given.values if v.instruction in entry), None) if given is not None else None
        param = entry.get(value.instruction) if value is not None else None
        if param is not None and param.shape.arrays and param.shape.arrays[0] in outputs:
            outputs.remove(param.shape.arrays[0])
    found: list[DonationCandidate] = []
    for number in sorted(parameters):
        allocation = parameters[number]
        if number in donated:
            continue
        value = next((v for v in allocation.values if v.instruction in entry), None)
        if value is None:
            continue
        arrays = entry[value.instruction].shape.arrays
        if len(arrays) != 1 or arrays[0] not in outputs:
            continue
        index = outputs.index(arrays[0])
        outputs[index] = ("", ())  # matched: one argument per output
        dtype, dims = arrays[0]
        found.append(DonationCandidate(sources.argument(value.instruction), number,
                                       f"{dtype}[{','.join(map(str, dims))}]", allocation.size, f"output {index}"))
    return tuple(found)
