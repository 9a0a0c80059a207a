"""XLA's dump of one compile -> totals, the peak, bytes by line, residuals, donation candidates (pure: no jax).

The per-line rows add up to the bytes made by source lines at the peak; with the arguments, the
constants and the values no line made, they add up to the peak itself (``Peak`` keeps each part).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from jitscope.buffers.advice import (
    UNMARKED,
    donation_candidates,
    residual_lines,
    residual_slots,
    unmarked_backward,
)
from jitscope.buffers.liveness import peak_live
from jitscope.buffers.sources import Sources
from jitscope.jaxcompat.buffer_assignment import (
    CONSTANT,
    OUTPUT,
    PARAMETER,
    TEMPORARY,
    Allocation,
    parse_allocations,
    parse_live_ranges,
)
from jitscope.model.common import Location
from jitscope.model.memory import (
    ARGUMENT,
    BufferRecord,
    DonationCandidate,
    LineMemory,
    NestedMemory,
    Peak,
    ResidualLine,
    Totals,
)
from jitscope.profiling.attribute import FunctionSpan
from jitscope.profiling.callsites import Chain
from jitscope.profiling.hlo import parse_module

#: memory_analysis() and the buffer assignment may differ by this much (bytes) before it is said: padding.
SLACK = 64
_LAYOUT = re.compile(r"\]\{[^}]*\}")
_KIND = {PARAMETER: ARGUMENT, OUTPUT: "output", TEMPORARY: "temporary", CONSTANT: "constant"}


@dataclass(frozen=True, slots=True)
class Analysis:
    module: str
    totals: Totals
    peak: Peak
    lines: tuple[LineMemory, ...]
    residuals: tuple[ResidualLine, ...]
    donations: tuple[DonationCandidate, ...]
    header: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def totals(allocations: tuple[Allocation, ...], analysis: Mapping[str, int | None]) -> Totals:
    """The buffer assignment's totals, and where ``compiled.memory_analysis()`` says otherwise."""
    arguments = sum(a.size for a in allocations if a.kind == PARAMETER)
    aliased = sum(a.size for a in allocations if a.kind == PARAMETER and a.live_out)
    outputs = sum(a.size for a in allocations if a.kind == OUTPUT) + aliased
    temporaries = sum(a.size for a in allocations if a.kind == TEMPORARY)
    constants = sum(a.size for a in allocations if a.kind == CONSTANT)
    ours = {"arguments": arguments, "outputs": outputs, "aliased": aliased, "temporaries": temporaries}
    differences = []
    for name, value in ours.items():
        theirs = analysis.get(name)
        if theirs is not None and abs(theirs - value) > SLACK:
            differences.append(f"{name}: memory_analysis() says {theirs:,} bytes, the buffer assignment "
                               f"{value:,} ({theirs - value:+,})")
    return Totals(arguments=arguments, outputs=outputs, aliased=aliased, temporaries=temporaries, constants=constants,
                  generated_code=analysis.get("generated_code"), reserved=arguments + outputs - aliased + temporaries,
                  analysis=dict(analysis), differences=tuple(differences), reconciles=not differences)


@dataclass
class _Line:
    bytes: int = 0
    buffers: int = 0
    residual: int = 0
    primitives: dict[str, int] = field(default_factory=dict)
    nested: dict[Location, int] = field(default_factory=dict)
    in_function: bool = True


def _lines(buffers: tuple[BufferRecord, ...], live_bytes: int) -> tuple[LineMemory, ...]:
    table: dict[Location, _Line] = defaultdict(_Line)
    for buffer in buffers:
        if buffer.kind == ARGUMENT or buffer.location is None or buffer.kind == "constant":
            continue
        line = table[buffer.location]
        line.bytes += buffer.bytes
        line.buffers += 1
        line.residual += buffer.bytes if buffer.residual else 0
        line.in_function = buffer.in_function
        if buffer.primitive:
            line.primitives[buffer.primitive] = line.primitives.get(buffer.primitive, 0) + buffer.bytes
        if buffer.helper is not None:
            line.nested[buffer.helper] = line.nested.get(buffer.helper, 0) + buffer.bytes
    out = [LineMemory(location, line.bytes, line.bytes / live_bytes if live_bytes else 0.0, line.buffers,
                      line.residual, tuple(sorted(line.primitives, key=lambda p: -line.primitives[p])),
                      tuple(NestedMemory(loc, b) for loc, b in sorted(line.nested.items(), key=lambda kv: -kv[1])),
                      line.in_function)
           for location, line in table.items()]
    out.sort(key=lambda r: (-r.bytes, r.location.file, r.location.line))
    return tuple(out)


def analyse(module_text: str, assignment_text: str, live_text: str, memory_analysis: Mapping[str, int | None],
            span: FunctionSpan, is_user_file: Callable[[str], bool],
            chains: Mapping[tuple[str, int], Chain] | None = None) -> Analysis:
    module = parse_module(module_text)
    allocations = parse_allocations(assignment_text)
    ranges = parse_live_ranges(live_text)
    live = peak_live(allocations, ranges)
    sources = Sources(module, span, is_user_file, chains)
    residuals = residual_slots(live, module, sources)
    buffers: list[BufferRecord] = []
    for slot, value in live.live:
        kind = _KIND.get(slot.allocation.kind, "temporary")
        value = residuals.get(id(slot), value)  # a residual's slot is listed by the residual it holds
        source = sources.source(value.instruction)
        argument = sources.argument(value.instruction) if kind == ARGUMENT else ""
        buffers.append(BufferRecord(
            instruction=value.instruction, shape=_LAYOUT.sub("]", value.shape),
            bytes=slot.size, kind=kind, location=None if kind == ARGUMENT else source.location,
            helper=source.helper, in_function=source.in_function, argument=argument, primitive=source.primitive,
            residual=id(slot) in residuals, donated=kind == ARGUMENT and slot.allocation.live_out))
    buffers.sort(key=lambda b: (-b.bytes, b.instruction))
    ordered = tuple(buffers)
    arguments = sum(b.bytes for b in ordered if b.kind == ARGUMENT)
    constants = sum(b.bytes for b in ordered if b.kind == "constant")
    on_lines = sum(b.bytes for b in ordered if b.kind not in (ARGUMENT, "constant") and b.location is not None)
    at = live.position
    running = ranges.sequence[at] if 0 <= at < len(ranges.sequence) else "(the end of the program)"
    where = sources.source(running).location if at < len(ranges.sequence) else None
    peak = Peak(bytes=live.bytes, position=at, steps=live.steps, instruction=running, location=where,
                buffers=ordered, on_lines=on_lines, arguments=arguments, constants=constants,
                no_source=live.bytes - arguments - constants - on_lines)
    header = next((line for line in module_text.splitlines() if line.startswith("HloModule ")), "")
    return Analysis(module=module.name, totals=totals(allocations, memory_analysis), peak=peak,
                    lines=_lines(ordered, live.bytes), residuals=residual_lines(live, residuals, sources),
                    donations=donation_candidates(allocations, module, sources, header), header=header,
                    notes=(UNMARKED,) if unmarked_backward(module) else ())
