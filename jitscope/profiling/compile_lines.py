"""A cold compile by line of the user's code, the line that costs most first, with what to do (pure).

Per line: the jaxpr equations it produced (``tracing/lines.source_lines``), the optimised HLO instructions
it produced (``line_costs.instruction_lines``: a fusion's fused instructions one by one), and how many
copies of itself it left (the greatest common divisor of its primitive counts: a body unrolled 300 times
gives 300 of each primitive). With ``--compile-profile`` also its time:

* tracing: the sampled Python stack's innermost frame in the user's code (``tracing/line_sampler.py``);
* lowering: split by equations (JAX lowers equation by equation);
* XLA: the kernels' generation time (``FusionCompiler::Compile`` events on CPU, measured per fused kernel;
  on a GPU, the autotuning of each fusion, by its candidates' compile time; split over the kernel's lines
  by instructions), and the rest of the compile (HLO passes, LLVM, ptxas) split by HLO instructions, which
  is what those passes walk.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jitscope.model.common import Location
from jitscope.model.compile import CompileLine
from jitscope.model.trace import SourceLineRecord
from jitscope.profiling.compile_phases import XlaPhases
from jitscope.tracing.lines import LineKey, line_key

#: A line with at least this many copies of itself is called an unrolled loop.
UNROLLED = 8
#: Copies are shown from this many on (a line with two matmuls and nothing else has "2 copies" of itself).
SHOWN_COPIES = 4
#: A line with this share of the program's HLO instructions dominates XLA's passes.
DOMINANT = 0.5
#: ... and is told to split the program only where the compile is slow: this many seconds measured, or
#: without a measurement this many HLO instructions (a one-line function is all one line, and fast).
SLOW_COMPILE_S = 1.0
LARGE_PROGRAM = 1000
#: A line with this share of the compile, most of it tracing, is told to trace less.
TRACE_HEAVY = 0.2
#: Lines given advice.
ADVISED = 3


@dataclass(frozen=True, slots=True)
class CompileTimes:
    """The stages' times (seconds; None where not measured) and the sampled tracing time by line."""

    trace: float | None = None
    lower: float | None = None
    xla: float | None = None
    trace_by_line: Mapping[LineKey | None, float] | None = None


def kernel_key(name: str) -> str:
    """A kernel or instruction name as both spell it: ``wrapped_reduce-window`` and ``wrapped_reduce_window``."""
    return re.sub(r"[^0-9A-Za-z]", "_", name)


def copies_of(primitives: Sequence[tuple[str, int]]) -> int:
    """How many times a line's equations repeat: the greatest common divisor of its primitive counts."""
    counts = [n for _, n in primitives if n > 0]
    return math.gcd(*counts) if counts else 1


def codegen_by_line(kernels: Mapping[str, float],
                    instructions: Mapping[str, Mapping[LineKey | None, float]]) -> dict[LineKey | None, float]:
    """Each kernel's generation time split over the lines of the instructions it fuses."""
    by_key = {kernel_key(name): lines for name, lines in instructions.items()}
    out: dict[LineKey | None, float] = defaultdict(float)
    for kernel, seconds in kernels.items():
        lines = by_key.get(kernel_key(kernel))
        total = sum(lines.values()) if lines else 0.0
        if not lines or total <= 0:
            out[None] += seconds
            continue
        for key, n in lines.items():
            out[key] += seconds * n / total
    return dict(out)


def generated_kernels(xla: XlaPhases, instructions: Mapping[str, Mapping[LineKey | None, float]]) -> dict[str, float]:
    """Seconds spent making each kernel: its generation (CPU), and on a GPU the autotuning of each fusion
    that is still an instruction of the optimised HLO (a fusion replaced by a library call, say, keeps its
    time in the rest of XLA's, which is split by instructions)."""
    out = dict(xla.kernels)
    if xla.autotuning is not None:
        known = {kernel_key(name) for name in instructions}
        for fusion, seconds in xla.autotuning.fusions.items():
            if kernel_key(fusion) in known:
                out[fusion] = out.get(fusion, 0.0) + seconds
    return out


def _advice(line: CompileLine, profiled: bool, slow: bool) -> tuple[str, str]:
    basis = "measured" if profiled else "rule of thumb"
    if line.location is None:
        return "", ""
    if line.copies >= UNROLLED:
        return (f"a Python loop unrolled into {line.copies} copies of this line: put the body in lax.scan or "
                "lax.fori_loop, which traces and compiles it once", basis)
    if line.hlo_share >= DOMINANT and slow:
        return ("one line makes most of the program: split the function, or wrap the region in jax.checkpoint "
                "with a policy (jax.checkpoint_policies) to bound what XLA optimises at once", "rule of thumb")
    if (profiled and line.trace_seconds and line.compile_seconds and (line.compile_share or 0.0) >= TRACE_HEAVY
            and line.trace_seconds > line.compile_seconds / 2):
        return ("mostly Python time while tracing: move work that does not depend on the arguments out of the "
                "function, or make fewer static variants so it is traced fewer times", basis)
    return "", ""


def compile_lines(source: Sequence[SourceLineRecord], instructions: Mapping[str, Mapping[LineKey | None, float]],
                  times: CompileTimes | None = None, xla: XlaPhases | None = None) -> tuple[CompileLine, ...]:
    """Every line, the one that costs the compile most first (with ``times``), else most HLO instructions
    first; the top ones with advice."""
    eqns: dict[LineKey | None, SourceLineRecord] = {line_key(s.location): s for s in source}
    hlo: dict[LineKey | None, float] = defaultdict(float)
    for lines in instructions.values():
        for key, n in lines.items():
            hlo[key] += n
    total_eqns = sum(s.eqns for s in source) or 1
    total_hlo = sum(hlo.values()) or 1.0
    codegen = codegen_by_line(generated_kernels(xla, instructions), instructions) if xla is not None and xla.found else None
    profiled = times is not None and times.xla is not None
    rows = []
    for key in dict.fromkeys([*eqns, *hlo]):
        record = eqns.get(key)
        location = record.location if record is not None else (None if key is None else Location(key[0], key[1]))
        n_eqns = record.eqns if record is not None else 0
        line = CompileLine(location=location, eqns=n_eqns, eqn_share=n_eqns / total_eqns,
                           hlo_instructions=round(hlo.get(key, 0.0)), hlo_share=hlo.get(key, 0.0) / total_hlo,
                           copies=copies_of(record.primitives) if record is not None and location else 1)
        if profiled and times is not None:
            line = _timed(line, key, times, codegen, total_hlo, hlo)
        rows.append(line)
    if profiled:
        rows.sort(key=lambda r: (r.location is None, -(r.compile_seconds or 0.0)))
    else:
        rows.sort(key=lambda r: (r.location is None, -r.hlo_instructions, -r.eqns))
    if profiled and times is not None:
        slow = (times.trace or 0.0) + (times.lower or 0.0) + (times.xla or 0.0) >= SLOW_COMPILE_S
    else:
        slow = total_hlo >= LARGE_PROGRAM
    out = []
    for i, row in enumerate(rows):
        if i < ADVISED:
            advice, basis = _advice(row, profiled, slow)
            row = _with(row, advice=advice, advice_basis=basis)
        out.append(row)
    return tuple(out)


def _timed(line: CompileLine, key: LineKey | None, times: CompileTimes, codegen: Mapping[LineKey | None, float] | None,
           total_hlo: float, hlo: Mapping[LineKey | None, float]) -> CompileLine:
    """The line's tracing, lowering and XLA time, and its share of the whole cold compile."""
    trace, lower, xla = times.trace or 0.0, times.lower or 0.0, times.xla or 0.0
    if times.trace_by_line:
        traced = times.trace_by_line.get(key, 0.0)
    else:  # no samples: tracing split by equations, as lowering is
        traced = trace * line.eqn_share
    kernels = min(sum(codegen.values()), xla) if codegen else 0.0
    generated = kernels * codegen.get(key, 0.0) / sum(codegen.values()) if codegen and kernels else 0.0
    rest = (xla - kernels) * hlo.get(key, 0.0) / total_hlo
    seconds = traced + lower * line.eqn_share + generated + rest
    whole = trace + lower + xla
    return _with(line, trace_seconds=traced, codegen_seconds=generated if codegen is not None else None,
                 compile_seconds=seconds, compile_share=seconds / whole if whole > 0 else None)


def _with(line: CompileLine, **changes: object) -> CompileLine:
    return dataclasses.replace(line, **changes)  # type: ignore[arg-type]
