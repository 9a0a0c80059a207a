"""XLA's FLOPs and bytes for a compiled module, split over the lines of the user's code (pure: no jax).

XLA's cost analysis gives one total per module. Each HLO instruction the module runs (a fusion's
fused instructions one by one, a loop's body once) gets its share: its FLOPs and bytes as
``jitscope profile`` estimates them (``profiling/attribute.parts``, ``profiling/hlo``), scaled so
that the shares add up to XLA's totals. An instruction's line is the first frame of its source stack
(the HLO metadata) in the user's code, so a library's work counts toward the user's line that called
it. XLA that keeps one frame per instruction (JAX before 0.7) names the innermost non-JAX frame,
often a library line: the jaxpr says which user lines called that library line, and the work is
split between them in proportion to their equations there.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator

from jitscope.model.common import Location
from jitscope.model.jaxpr import JaxprRecord, distinct_eqns
from jitscope.profiling.hlo import HloModule, Instruction, instruction_bytes, parse_module
from jitscope.profiling.hlo_work import Part, fed_reduce_stack, parts
from jitscope.tracing.lines import LineKey, line_key

#: Control flow whose called computations run as instructions of their own.
_CONTROL = ("while", "conditional", "call", "async-start")

Costs = dict[LineKey | None, tuple[float, float]]


def _executed(module: HloModule) -> Iterator[tuple[Instruction, dict[str, Instruction]]]:
    """Each top-level instruction the module runs with its computation's instructions by name; loop and
    branch bodies once each (trip counts are not known here)."""
    seen: set[str] = set()
    pending = [module.entry.name]
    while pending:
        name = pending.pop()
        computation = module.computations.get(name)
        if computation is None or name in seen:
            continue
        seen.add(name)
        operands = computation.by_name()
        for instruction in computation.instructions:
            if instruction.opcode in _CONTROL:
                pending.extend(instruction.calls)
            else:
                yield instruction, operands


def library_lines(record: JaxprRecord) -> dict[tuple[str, int], Counter[LineKey]]:
    """(file basename, line) of a library frame -> the user lines whose equations passed through it."""
    found: dict[tuple[str, int], Counter[LineKey]] = defaultdict(Counter)
    for eqn in distinct_eqns(record):
        user = line_key(eqn.location)
        if user is not None:
            for frame in (eqn.library, eqn.library_call):
                if frame is not None:
                    found[(os.path.basename(frame.file), frame.line)][user] += 1
    return found


def _lines_of(stack: tuple[Location, ...], is_user_file: Callable[[str], bool],
              via: dict[tuple[str, int], Counter[LineKey]]) -> list[tuple[LineKey | None, float]]:
    """The user line(s) an instruction's stack belongs to, with shares adding up to 1."""
    for frame in stack:
        if is_user_file(frame.file):
            return [((frame.file, frame.line), 1.0)]
    for frame in stack:  # no user frame kept: which user lines reached this library line in the jaxpr
        callers = via.get((os.path.basename(frame.file), frame.line))
        if callers:
            total = sum(callers.values())
            return [(key, n / total) for key, n in callers.items()]
    return [(None, 1.0)]


def line_costs(hlo_text: str, record: JaxprRecord, is_user_file: Callable[[str], bool],
               total_flops: float | None, total_bytes: float | None) -> Costs:
    """Per user line (None: work no line of the user's made): (FLOPs, bytes), adding up to XLA's totals.

    With no XLA total (a backend without cost analysis) the estimates are returned unscaled.
    """
    module = parse_module(hlo_text)
    flops: dict[LineKey | None, float] = defaultdict(float)
    moved: dict[LineKey | None, float] = defaultdict(float)
    for op, operands, part, share, key, fraction in _attributed(module, record, is_user_file):
        flops[key] += part.flops * fraction
        moved[key] += instruction_bytes(op, operands) * share * fraction
    return {key: (flops[key] * _scale(total_flops, flops), moved[key] * _scale(total_bytes, moved))
            for key in dict.fromkeys([*flops, *moved])}


def instruction_lines(hlo_text: str, record: JaxprRecord,
                      is_user_file: Callable[[str], bool]) -> dict[str, dict[LineKey | None, float]]:
    """Per top-level instruction of the optimised HLO (a fusion, a loop's body's ops): how many of the
    instructions it runs (a fusion's fused ones, one by one) each user line made (None: no line of theirs)."""
    out: dict[str, dict[LineKey | None, float]] = defaultdict(lambda: defaultdict(float))
    for op, _, _, _, key, fraction in _attributed(parse_module(hlo_text), record, is_user_file):
        out[op.name][key] += fraction
    return {name: dict(lines) for name, lines in out.items()}


def _attributed(module: HloModule, record: JaxprRecord, is_user_file: Callable[[str], bool]) -> Iterator[
        tuple[Instruction, dict[str, Instruction], Part, float, LineKey | None, float]]:
    """Each instruction the module runs (top-level op, its computation's instructions, the part it ran, the
    part's weight share in the op), once per user line it belongs to, with that line's fraction."""
    via = library_lines(record)
    for op, operands in _executed(module):
        op_parts = parts(op, module)
        weights = sum(p.weight for p in op_parts)
        for part in op_parts:
            share = part.weight / weights if weights else 1.0 / len(op_parts)
            stack = (module.stack(part.instruction) or module.stack(op) or fed_reduce_stack(part.instruction, module)
                     or _nearby_stack(op, operands, module))
            for key, fraction in _lines_of(stack, is_user_file, via):
                yield op, operands, part, share, key, fraction


def _nearby_stack(op: Instruction, operands: dict[str, Instruction], module: HloModule) -> tuple[Location, ...]:
    """The stack of the instructions around one XLA made without metadata (CPU's rewrite of a gradient's
    convolution): its operands', else its users', since it does their line's work."""
    def stack_of(instruction: Instruction) -> tuple[Location, ...]:
        found = module.stack(instruction)
        if not found and instruction.opcode == "fusion":
            found = next((module.stack(p.instruction) for p in parts(instruction, module) if module.stack(p.instruction)),
                         ())
        return found

    for name in op.operands:
        neighbour = operands.get(name)
        if neighbour is not None and (found := stack_of(neighbour)):
            return found
    for user in operands.values():
        if op.name in user.operands and (found := stack_of(user)):
            return found
    return ()


def _scale(total: float | None, estimates: dict[LineKey | None, float]) -> float:
    estimated = sum(estimates.values())
    return total / estimated if total is not None and estimated > 0 else 1.0
