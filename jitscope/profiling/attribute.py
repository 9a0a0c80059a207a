"""Device time per HLO instruction -> time per source line of the profiled function (pure: no jax).

An executed instruction is split into the instructions it ran (a fusion's fused computation,
recursively); each gets a share of the time by ``SPLIT_RULE`` (model/profile.py) and is
traced through its metadata to a Python stack. The line it is listed under is the first frame,
innermost first, inside the profiled function's body: work done in a helper the function calls
is listed on the call line, and the helper's own line is kept as that line's nested breakdown.
Work from no frame inside the function (a caller's code, a decorator) is listed at its innermost
user frame, marked ``in_function=False``.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from jitscope.model.common import Location
from jitscope.model.profile import DevicePeak, LineRecord, NestedLine, OpLine, OpRecord
from jitscope.profiling.callsites import Chain
from jitscope.profiling.events import DeviceTimes, classify_op
from jitscope.profiling.hlo import HloModule, instruction_bytes
from jitscope.profiling.hlo_work import Part, fed_reduce_stack, parts
from jitscope.profiling.peaks import peak_flops

#: Ops whose exclusive times add up to more than busy time by this much ran concurrently.
CONCURRENT = 1.01


@dataclass(frozen=True, slots=True)
class FunctionSpan:
    """The profiled function's body: its file and line range."""

    file: str
    first: int
    last: int
    name: str = ""

    def contains(self, location: Location) -> bool:
        return self.first <= location.line <= self.last and _same_file(location.file, self.file)


def _same_file(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def listed_line(stack: tuple[Location, ...], span: FunctionSpan,
                is_user_file: Callable[[str], bool]) -> tuple[Location, bool, Location | None, tuple[Location, ...]]:
    """(the line to list the work at, whether it is in the function, the helper's line, the stack up to it)."""
    for k, frame in enumerate(stack):
        if span.contains(frame):
            # One key per line: a lambda or comprehension on the line is the line itself.
            helpers = [f for f in stack[:k] if is_user_file(f.file)]
            listed = Location(frame.file, frame.line, span.name or frame.function)
            return listed, True, _bare(helpers[0]) if helpers else None, stack[: k + 1]
    user = [f for f in stack if is_user_file(f.file)]
    chosen = user[0] if user else stack[0]
    return _bare(chosen), False, None, stack


def _bare(location: Location) -> Location:
    """A line as a key: file, line and function (the column varies between uses on one line)."""
    return Location(location.file, location.line, location.function)


@dataclass
class _Line:
    seconds: float = 0.0
    ops: dict[str, float] = field(default_factory=dict)  # op name -> events per call
    flops: float = 0.0
    bytes: float = 0.0
    primitives: dict[str, float] = field(default_factory=dict)
    scopes: dict[str, float] = field(default_factory=dict)
    nested: dict[Location, tuple[float, tuple[Location, ...]]] = field(default_factory=dict)
    in_function: bool = True
    at_peak: float | None = None  # seconds its FLOPs would take at the device's peaks; None: no known peak


def _add(table: dict[str, float], key: str, seconds: float) -> None:
    if key:
        table[key] = table.get(key, 0.0) + seconds


def _ranked(table: dict[str, float]) -> tuple[str, ...]:
    return tuple(k for k, _ in sorted(table.items(), key=lambda kv: -kv[1]))


def _rate(amount: float, seconds: float) -> float | None:
    return amount / seconds if amount > 0 and seconds > 0 else None


def _at_peak(part: Part, peak: DevicePeak | None, per_call: float) -> float | None:
    """Seconds per call ``part``'s FLOPs take at the peak for its result's element type; None if unknown."""
    if peak is None or part.flops <= 0 or not part.instruction.shape.arrays:
        return None
    rate = peak_flops(peak, part.instruction.shape.arrays[0][0])
    return part.flops * per_call / rate if rate else None


def _plus(total: float | None, more: float | None) -> float | None:
    return total if more is None else (total or 0.0) + more


def _shares(peak: DevicePeak | None, at_peak: float | None, amount: float | None,
            seconds: float) -> tuple[float | None, float | None]:
    """(share of peak FLOP/s, share of peak bandwidth) of work that took ``seconds`` and moved ``amount`` bytes."""
    if peak is None or seconds <= 0:
        return None, None
    flops_share = at_peak / seconds if at_peak else None
    bytes_share = amount / seconds / peak.bytes_per_second if amount and peak.bytes_per_second > 0 else None
    return flops_share, bytes_share


@dataclass(frozen=True, slots=True)
class Attribution:
    lines: tuple[LineRecord, ...]
    ops: tuple[OpRecord, ...]
    no_source: float  # per call: op time with no source line
    scale: float  # op times were multiplied by this to add up to busy time (concurrent thunks)


def attribute(times: DeviceTimes, module: HloModule, span: FunctionSpan, calls: int,
              is_user_file: Callable[[str], bool], chains: Mapping[tuple[str, int], Chain] | None = None,
              peak: DevicePeak | None = None) -> Attribution:
    """Lines (most time first) and ops (most time first), every time per call.

    ``chains`` (``callsites.call_chains``) completes a one-frame stack (older XLA: no stack-frame
    tables) outside the function with the calls that lead to it from the function's line. With the
    device's ``peak``, each line and op gets its share of the peak FLOP/s and bandwidth.
    """
    instructions = module.instructions()
    scale = times.busy / times.op_seconds if times.op_seconds > times.busy * CONCURRENT > 0 else 1.0
    total = times.op_seconds * scale / calls if calls else 0.0
    lines: dict[Location, _Line] = defaultdict(_Line)
    ops: list[OpRecord] = []
    no_source = 0.0
    for op_time in times.ops:
        seconds = op_time.seconds * scale / calls
        per_call = op_time.events / calls
        found = instructions.get(op_time.name)
        if found is None:
            no_source += seconds
            ops.append(OpRecord(op_time.name, "", classify_op("", op_time.name), seconds,
                                seconds / total if total else 0.0, per_call, None, None))
            continue
        op, computation = found
        op_bytes = instruction_bytes(op, computation.by_name())
        op_parts = parts(op, module)
        weight_sum = sum(p.weight for p in op_parts)
        op_lines: dict[Location, float] = defaultdict(float)
        primitives: dict[str, float] = {}
        op_flops = 0.0
        op_at_peak: float | None = None
        for part in op_parts:
            share = part.weight / weight_sum if weight_sum else 0.0
            stack = module.stack(part.instruction) or module.stack(op) or fed_reduce_stack(part.instruction, module)
            if chains and len(stack) == 1 and not span.contains(stack[0]):
                stack = chains.get((stack[0].file, stack[0].line), stack)
            op_flops += part.flops
            at_peak = _at_peak(part, peak, per_call)
            op_at_peak = _plus(op_at_peak, at_peak)
            primitive = part.instruction.op_name.rsplit("/", 1)[-1] if part.instruction.op_name else ""
            _add(primitives, primitive, seconds * share)
            if not stack:
                no_source += seconds * share
                continue
            where, inside, helper, trail = listed_line(stack, span, is_user_file)
            line = lines[where]
            line.in_function = inside
            line.seconds += seconds * share
            line.ops[op.name] = per_call
            line.flops += part.flops * per_call
            line.bytes += op_bytes * share * per_call
            line.at_peak = _plus(line.at_peak, at_peak)
            _add(line.primitives, primitive, seconds * share)
            _add(line.scopes, part.instruction.op_name.rpartition("/")[0], seconds * share)
            if helper is not None and helper != where:
                before, _ = line.nested.get(helper, (0.0, trail))
                line.nested[helper] = (before + seconds * share, trail)
            op_lines[where] += share
        flops_share, bytes_share = _shares(peak, op_at_peak, op_bytes * per_call, seconds)
        ops.append(OpRecord(
            name=op.name, opcode=op.opcode, category=classify_op(op.opcode, op.name), seconds=seconds,
            share=seconds / total if total else 0.0, events=per_call, flops=op_flops * per_call or None,
            bytes=op_bytes * per_call or None, fusion_kind=op.fusion_kind,
            lines=tuple(OpLine(loc, s) for loc, s in sorted(op_lines.items(), key=lambda kv: -kv[1])),
            primitives=_ranked(primitives), dtype=op.shape.arrays[0][0] if op.shape.arrays else "",
            flops_peak_share=flops_share, bytes_peak_share=bytes_share))
    records = []
    for where, line in lines.items():
        flops_share, bytes_share = _shares(peak, line.at_peak, line.bytes, line.seconds)
        records.append(LineRecord(
            location=where, seconds=line.seconds, share=line.seconds / total if total else 0.0,
            ops=sum(line.ops.values()), flops=line.flops or None, bytes=line.bytes or None,
            flops_per_second=_rate(line.flops, line.seconds), bytes_per_second=_rate(line.bytes, line.seconds),
            primitives=_ranked(line.primitives), scopes=_ranked(line.scopes), hlo_ops=tuple(line.ops),
            nested=tuple(NestedLine(loc, s, trail) for loc, (s, trail) in
                         sorted(line.nested.items(), key=lambda kv: -kv[1][0])),
            in_function=line.in_function, flops_peak_share=flops_share, bytes_peak_share=bytes_share))
    records.sort(key=lambda r: -r.seconds)
    ops.sort(key=lambda o: -o.seconds)
    return Attribution(tuple(records), tuple(ops), no_source, scale)
