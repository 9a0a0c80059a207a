"""Two processes' compiled programs compared: the first line where they differ, and its source line.

The programs are the optimised HLO each process kept in its report (``run/programs.py``),
compared in canonical form (metadata and the Python stack tables removed: what differs between
processes of one SPMD step). The first differing line is where the processes' programs part; its
metadata, still in the kept text, names the user's line that produced the op on each side.
"""

from __future__ import annotations

import re
from collections import Counter

from jitscope.model.common import Location
from jitscope.model.hosts import ProgramDifference
from jitscope.model.run import CompiledProgram
from jitscope.run.programs import canonical_pairs, unpack_hlo

#: Lines before the first difference shown with it.
CONTEXT_LINES = 2
_COLLECTIVE = re.compile(r"\b(all-reduce|all-gather|reduce-scatter|collective-permute|all-to-all|"
                         r"collective-broadcast|ragged-all-to-all)(?:-start)?\(")
_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s+\(.*\)\s*->.*\{\s*$")


def collectives(program: CompiledProgram) -> tuple[str, ...]:
    """The collectives in the program, by kind: ``("all-reduce x2",)``; () when none (or no HLO kept)."""
    return _collectives_of(unpack_hlo(program))


def _collectives_of(text: str) -> tuple[str, ...]:
    counts = Counter(match.group(1) for match in _COLLECTIVE.finditer(text))
    return tuple(f"{kind} x{n}" if n > 1 else kind for kind, n in sorted(counts.items()))


def first_difference(reference: CompiledProgram, other: CompiledProgram, reference_processes: tuple[int, ...],
                     processes: tuple[int, ...]) -> ProgramDifference:
    """Where ``other``'s program first departs from ``reference``'s."""
    base = ProgramDifference(reference_processes, processes, reference.fingerprint, other.fingerprint, "", 0, "", "")
    a_text, b_text = unpack_hlo(reference), unpack_hlo(other)
    if not a_text or not b_text:
        return _replace(base, unavailable="the optimised HLO was not kept in the reports")
    a, b = canonical_pairs(a_text), canonical_pairs(b_text)
    index = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x[0] != y[0]), min(len(a), len(b)))
    if index == len(a) == len(b):
        why = "the kept HLO was cut short before they differ" if reference.truncated or other.truncated else \
            "the kept HLO texts agree (the fingerprints were taken from different texts)"
        return _replace(base, unavailable=why)
    computation = next((m.group(1) for line, _ in reversed(a[:index])
                        if (m := _COMPUTATION.match(line)) is not None), "")
    a_source, a_near = _source(a_text, a, index)
    b_source, b_near = _source(b_text, b, index)
    return ProgramDifference(
        reference_processes, processes, reference.fingerprint, other.fingerprint, computation, index + 1,
        a[index][0].strip() if index < len(a) else "", b[index][0].strip() if index < len(b) else "",
        a_source, b_source, tuple(line.strip() for line, _ in a[max(index - CONTEXT_LINES, 0):index]),
        reference_collectives=_collectives_of(a_text), collectives=_collectives_of(b_text),
        source_nearby=a_near or b_near)


def _replace(base: ProgramDifference, **changes: object) -> ProgramDifference:
    from dataclasses import replace

    return replace(base, **changes)  # type: ignore[arg-type]


def _source(text: str, pairs: list[tuple[str, str]], index: int) -> tuple[Location | None, bool]:
    """The user's line the instruction at ``index`` came from (innermost frame of its metadata's stack), and
    whether it is a neighbour's: a constant or parameter carries no metadata, so the first instruction after it
    in its computation that does (its user, usually) stands in."""
    from jitscope.profiling.hlo import parse_instruction, parse_module

    module = None
    for at in range(index, len(pairs)):
        line = pairs[at][1]
        if line.startswith("}"):
            break
        instruction = parse_instruction(line)
        if instruction is None:
            continue
        location = instruction.source
        if instruction.frame_id is not None:
            module = module or parse_module(text)
            stack = module.stack(instruction)
            location = stack[0] if stack else None
        if location is not None:
            return location, at != index
    return None, False
