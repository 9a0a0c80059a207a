"""XLA's buffer assignment and live-range texts -> plain records (pure: no jax).

The grammar, as XLA 0.4.38 to 0.12 write it (``jaxcompat/xla_dump.py`` gets the texts)::

    allocation 0: size 524288, page 0, parameter 1, shape |f32[256,512]| at ShapeIndex {}:
    allocation 0: size 1048576, parameter 0, shape |f32[512]| at ShapeIndex {}, output shape is |f32[512]|, maybe-live-out:
    allocation 2: size 4, output shape is |f32[]|, maybe-live-out:
    allocation 3: size 4, constant:
    allocation 4: size 4, thread-local:
    allocation 16: size 262148, preallocated-temp:
     value: <36 w.1 @0> (size=524288,offset=0): f32[256,512]{1,0}
     value: <39 arg_tuple.1{1} (phi) @0> (size=1048576,offset=0): f32[512,512]{1,0}

    HloLiveRange (max 8):
      InstructionSequence:
        0:x.1
      BufferLiveRange:
        x.1{}:0-8          (0.4.38 writes x.1 for index {})

A value is named by its defining instruction and the index in that instruction's (tuple) shape.
Anything else in the texts (statistics, the ``Used values`` list, the peak XLA prints) is not read:
the peak is worked out again from these parts, with aliasing values counted once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ALLOCATION = re.compile(r"^allocation (\d+): size (\d+)(.*):\s*$")
_VALUE = re.compile(r"^\s*value: <(\d+) ([^\s{]+)(\{[\d,]*\})?( \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\): (.*)$")
_PARAMETER = re.compile(r"\bparameter (\d+)")
_SEQUENCE = re.compile(r"^\s+(\d+):(\S+)\s*$")
_RANGE = re.compile(r"^\s+([^\s{]+)(\{[\d,]*\})?:(-?\d+)-(-?\d+)\s*$")

#: Allocation kinds, as read from the allocation line.
PARAMETER, OUTPUT, CONSTANT, THREAD_LOCAL, TEMPORARY = "parameter", "output", "constant", "thread-local", "temporary"

ValueKey = tuple[str, str]  # (defining instruction, shape index "{}", "{1}")


@dataclass(frozen=True, slots=True)
class AllocatedValue:
    id: int
    instruction: str
    index: str  # "{}" for the whole result, "{1}" for a tuple element
    size: int
    offset: int
    shape: str  # "f32[256,512]{1,0}"
    phi: bool = False  # a loop's merge of values (a while's carry), not computed by its instruction

    @property
    def key(self) -> ValueKey:
        return self.instruction, self.index


@dataclass(frozen=True, slots=True)
class Allocation:
    index: int
    size: int
    kind: str  # PARAMETER, OUTPUT, CONSTANT, THREAD_LOCAL or TEMPORARY
    parameter: int | None  # the entry parameter number (PARAMETER)
    live_out: bool  # holds (part of) the output: a donated parameter's buffer reused for an output
    values: tuple[AllocatedValue, ...]


@dataclass(frozen=True, slots=True)
class LiveRanges:
    sequence: tuple[str, ...]  # the flattened schedule: instruction names, loop bodies inline
    ranges: dict[ValueKey, tuple[int, int]]  # inclusive [start, end] positions in ``sequence``


def parse_allocations(text: str) -> tuple[Allocation, ...]:
    out: list[Allocation] = []
    header: re.Match[str] | None = None
    values: list[AllocatedValue] = []

    def close() -> None:
        if header is not None:
            out.append(_allocation(header, tuple(values)))

    for line in text.splitlines():
        match = _ALLOCATION.match(line)
        if match is not None:
            close()
            header, values = match, []
            continue
        value = _VALUE.match(line)
        if value is not None and header is not None:
            ident, name, index, phi, size, offset, shape = value.groups()
            values.append(AllocatedValue(int(ident), name, index or "{}", int(size), int(offset), shape.strip(),
                                         bool(phi)))
            continue
        if header is not None and line.strip() and not line.startswith(" "):
            close()  # the end of the allocation list (statistics, "Used values:", the live ranges)
            header, values = None, []
    close()
    return tuple(out)


def _allocation(header: re.Match[str], values: tuple[AllocatedValue, ...]) -> Allocation:
    flags = header.group(3)
    parameter = _PARAMETER.search(flags)
    live_out = "output shape is" in flags or "maybe-live-out" in flags
    if parameter is not None:
        kind = PARAMETER
    elif "constant" in flags:
        kind = CONSTANT
    elif "thread-local" in flags:
        kind = THREAD_LOCAL
    elif live_out:
        kind = OUTPUT
    else:
        kind = TEMPORARY
    return Allocation(int(header.group(1)), int(header.group(2)), kind,
                      int(parameter.group(1)) if parameter is not None else None, live_out, values)


def parse_live_ranges(text: str) -> LiveRanges:
    sequence: list[str] = []
    ranges: dict[ValueKey, tuple[int, int]] = {}
    part = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in ("InstructionSequence:", "BufferLiveRange:"):
            part = stripped
            continue
        if stripped.startswith(("Live ranges at", "Stack trace")):
            part = ""
            continue
        if part == "InstructionSequence:":
            match = _SEQUENCE.match(line)
            if match is not None:
                sequence.append(match.group(2))
        elif part == "BufferLiveRange:":
            found = _RANGE.match(line)
            if found is not None:
                name, index, start, end = found.groups()
                ranges[(name, index or "{}")] = (int(start), int(end))
    return LiveRanges(tuple(sequence), ranges)
