"""Why the compile is slow: a cold compile split by phase and by the user's source line (``--compile-profile``).

``CompileTimeRecord`` rides on a trace (``TraceRecord.compile_time``, trace schema 1.6) and on bench's cold
call (``BenchRow.compile_time``, bench schema 1.3). Its by-line counts come from the jaxpr and the optimised
HLO and are always there when compiled; its times come from ``--compile-profile``: tracing time by line from
a sampler of the Python stack, XLA's phases and passes from a ``jax.profiler`` capture around the compile,
and codegen time per line from the capture's per-fusion compile events.
"""

from __future__ import annotations

from dataclasses import dataclass

from jitscope.model.common import Location


@dataclass(frozen=True, slots=True)
class CompilePhase:
    """One part of XLA's compile as its profiler events name it (``HLO passes after layout assignment``,
    ``Codegen``), with its time in the captured compile."""

    name: str
    seconds: float


@dataclass(frozen=True, slots=True)
class CompilePass:
    """One named pass or step (``layout-assignment``, ``CSEPass``, ``FusionCompiler::Compile``): its own
    time (nested events excluded) summed over every thread and every time it ran."""

    name: str
    seconds: float
    runs: int


@dataclass(frozen=True, slots=True)
class CompileLine:
    """What one line of the user's code cost the compile."""

    #: The line; None for what no line of the user's code made.
    location: Location | None
    #: Jaxpr equations it produced (library internals included) and their share of the program's.
    eqns: int
    eqn_share: float
    #: Instructions of the optimised HLO it produced (a fusion's fused instructions counted one by one).
    hlo_instructions: int
    hlo_share: float
    #: How many times the line's equations repeat (the greatest common divisor of its primitive counts): a
    #: Python loop unrolled 300 times gives 300; 1 for a line run once.
    copies: int = 1
    #: Seconds of tracing spent in the line (sampled Python stack; None without ``--compile-profile``).
    trace_seconds: float | None = None
    #: Seconds XLA spent generating the line's kernels (the capture's per-fusion events; on a GPU, autotuning
    #: the line's fusions; None without).
    codegen_seconds: float | None = None
    #: Its share of the whole cold compile (trace + lower + XLA): measured parts plus the rest of XLA's
    #: time split by HLO instructions (None without ``--compile-profile``).
    compile_seconds: float | None = None
    compile_share: float | None = None
    #: What to do about it, and whether that advice rests on a measurement or is a rule of thumb.
    advice: str = ""
    advice_basis: str = ""  # "measured", "rule of thumb" or ""


@dataclass(frozen=True, slots=True)
class CompileTimeRecord:
    """A cold compile by phase and by line, the line that costs most first."""

    lines: tuple[CompileLine, ...] = ()
    #: The stages' own times (None where not measured).
    trace_seconds: float | None = None
    lower_seconds: float | None = None
    compile_seconds: float | None = None
    #: XLA's phases in the captured compile, in the order they ran, and the passes that took longest.
    phases: tuple[CompilePhase, ...] = ()
    passes: tuple[CompilePass, ...] = ()
    #: The captured compile's length (the compile client's outermost event); phases add up to it.
    captured_seconds: float | None = None
    #: Whether ``--compile-profile`` ran (the times above, by line and by phase, need it).
    profiled: bool = False
    #: The persistent compilation cache: "hit" (served from disk: no XLA phases), "miss", "" when not used.
    persistent_cache: str = ""
    #: Why there is no phase split, or what else limits the report (one line each).
    notes: tuple[str, ...] = ()
    #: The compile's failure, when XLA failed (the phases are those up to it).
    failure: str = ""

    @property
    def phase_total(self) -> float:
        return sum(p.seconds for p in self.phases)
