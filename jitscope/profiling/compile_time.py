"""The ``CompileTimeRecord`` of one cold compile, from what tracing, lowering and compiling left (pure).

``trace`` and ``bench``'s cold call both end here: the by-line counts from the jaxpr and the optimised
HLO, and, with ``--compile-profile``, the sampled tracing time by line and the capture around XLA's
compile (``jaxcompat/compile_profile.py``) split by ``compile_phases`` and ``compile_lines``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from jitscope.jaxcompat.compile_profile import CompileCapture
from jitscope.model.compile import CompilePhase, CompileTimeRecord
from jitscope.model.jaxpr import JaxprRecord
from jitscope.model.trace import SourceLineRecord
from jitscope.profiling.compile_lines import CompileTimes, compile_lines
from jitscope.profiling.compile_phases import XlaPhases, xla_phases
from jitscope.profiling.line_costs import instruction_lines
from jitscope.tracing.lines import LineKey
from jitscope.units import fmt_duration, fmt_fraction

#: The phases must add up to the compile measured around them within this share, or a note says so.
TOLERANCE = 0.10


#: Autotuning at least this share of XLA's compile gets its own note, with what to do.
AUTOTUNING_SHARE = 0.10


def _gpu_notes(xla: XlaPhases) -> list[str]:
    """What a GPU compile's capture says beyond its phases: autotuning's share, and parallel passes."""
    notes = []
    tuning = xla.autotuning
    if tuning is not None and xla.seconds > 0 and tuning.seconds >= AUTOTUNING_SHARE * xla.seconds:
        notes.append(
            f"XLA's GPU autotuning took {fmt_duration(tuning.seconds)}, {fmt_fraction(tuning.seconds / xla.seconds)} "
            f"of XLA's compile ({tuning.candidates:,} candidate kernels compiled, {tuning.timed_runs:,} runs timed "
            "on the GPU): JAX's persistent compilation cache skips it when the same program compiles again "
            "(jax_compilation_cache_dir), XLA's per-fusion cache keeps each fusion's choice across changes to the "
            "program (XLA_FLAGS=--xla_gpu_per_fusion_autotune_cache_dir=DIR), and "
            "--xla_gpu_autotune_level=0 skips it for possibly slower kernels (rule of thumb)")
    if xla.threads > 1 and sum(p.seconds for p in xla.passes) > xla.seconds:
        notes.append(f"passes: own time summed over the {xla.threads} threads XLA compiled on at once (it "
                     "generates kernels in parallel: LLVM, and ptxas on a GPU), so they add up to more than the "
                     "compile")
    return notes


def _notes(capture: CompileCapture, found: bool, captured: float | None, measured: float | None,
           failed: bool) -> list[str]:
    if capture.problem:
        return [capture.problem]
    if capture.persistent_cache == "hit":
        return ["served from the persistent compilation cache: XLA did not compile, so there is no phase split "
                "(clear the cache or set jax_enable_compilation_cache=False to see one)"]
    if not found:
        why = "the compile failed before XLA started" if failed else (
            "this JAX's capture holds no XLA compile events (seen on jax 0.10 and newer on CPU; 0.4.38's holds "
            "only LLVM's)")
        return [f"no phase split: {why}; XLA's time is split over the lines by their HLO instructions"]
    notes = []
    if captured and measured and captured - measured > TOLERANCE * measured:
        notes.append(f"XLA's events cover {captured / measured:.0%} of the compile measured around them")
    return notes


def _with_jax_side(phases: tuple[CompilePhase, ...], captured: float, measured: float | None) -> tuple[CompilePhase, ...]:
    """XLA's phases and, first, what JAX did around XLA's compile (cache key, options, loading the executable),
    so that they add up to the compile measured around them."""
    outside = (measured or 0.0) - captured
    return ((CompilePhase("JAX around XLA (cache key, options, executable)", outside),) if outside > 0 else ()) + phases


def compile_time_record(*, source: Sequence[SourceLineRecord], hlo_text: str | None, jaxpr: JaxprRecord | None,
                        is_user_file: Callable[[str], bool], trace_seconds: float | None,
                        lower_seconds: float | None, compile_seconds: float | None,
                        capture: CompileCapture | None = None,
                        trace_by_line: Mapping[LineKey | None, float] | None = None,
                        failure: str = "") -> CompileTimeRecord:
    """The compile by line (most costly first) and, with a ``capture``, by XLA phase."""
    instructions = instruction_lines(hlo_text, jaxpr, is_user_file) if hlo_text and jaxpr is not None else {}
    if capture is None:
        return CompileTimeRecord(lines=compile_lines(source, instructions), trace_seconds=trace_seconds,
                                 lower_seconds=lower_seconds, compile_seconds=compile_seconds, failure=failure)
    xla = xla_phases(capture.events) if capture.persistent_cache != "hit" else XlaPhases(found=False)
    measured = capture.seconds if capture.seconds is not None else compile_seconds
    xla_seconds = xla.seconds if xla.found else measured
    times = CompileTimes(trace=trace_seconds, lower=lower_seconds, xla=xla_seconds if not failure else None,
                         trace_by_line=trace_by_line)
    return CompileTimeRecord(
        lines=compile_lines(source, instructions, times, xla),
        trace_seconds=trace_seconds, lower_seconds=lower_seconds, compile_seconds=measured,
        phases=_with_jax_side(xla.phases, xla.seconds, measured) if xla.found else (), passes=xla.passes,
        captured_seconds=xla.seconds if xla.found else None,
        profiled=True, persistent_cache=capture.persistent_cache,
        notes=tuple(_notes(capture, xla.found, xla.seconds if xla.found else None, measured, bool(failure))
                    + (_gpu_notes(xla) if xla.found else [])),
        failure=failure)
