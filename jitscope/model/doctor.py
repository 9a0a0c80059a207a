"""Records of ``jitscope doctor``: what to fix first in a program, each finding with its measured cost.

A finding is one problem at one place of the user's code: what it is, what it cost in this run
(seconds of the program's wall time, measured by the run it comes from), the change that removes
it, and what that change buys, labelled ``measured`` (jitscope applied the change without editing
the user's files and measured again) or ``estimated`` (worked out from this run's figures: the
note says how). Findings are ranked by cost; hazards that cost no measurable time (a ``print``
that ran while JAX traced) come after the timed ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from jitscope.model.common import Location

#: Version of the ``jitscope.doctor`` JSON document; bump the major number on a breaking change.
DOCTOR_SCHEMA_VERSION = "1.1"

#: How a finding's gain is known.
MEASURED, ESTIMATED, NOT_ESTIMATED = "measured", "estimated", "none"

#: ``Finding.kind``: recompiles by cause, a jit built again and again, work outside jit, a compile that
#: dominates the run, a host-device sync in a loop, a side effect that ran while JAX traced, a lint hazard in
#: code the run compiled or reached.
RECOMPILE_STATIC = "recompile-static-value"
RECOMPILE_SHAPE = "recompile-shape"
RECOMPILE_DTYPE = "recompile-dtype"
RECOMPILE_WEAK_TYPE = "recompile-weak-type"
RECOMPILE_STRUCTURE = "recompile-structure"
RECOMPILE_OTHER = "recompile-other"
JIT_IN_LOOP = "jit-in-loop"
CACHE_DROPPED = "cache-dropped"
EAGER_OPS = "eager-ops"
SLOW_COMPILE = "slow-compile"
HOST_SYNC = "host-sync"
LINT_HAZARD = "lint"
#: Where a function's device time goes (ranked apart, by device time per call).
HOT_LINE = "hot-line"
TRACE_EFFECT = "trace-effect"
#: Memory findings (ranked apart, by bytes at the peak): an argument the step replaces but does not donate,
#: activations saved for the backward pass that ``jax.checkpoint`` measurably drops.
MISSING_DONATION = "missing-donation"
REMAT_RESIDUALS = "remat-residuals"
#: The kinds that are not timed (correctness hazards), ranked after the timed ones.
UNTIMED = frozenset({TRACE_EFFECT, LINT_HAZARD})


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem, where it is, what it cost in this run, and what to change."""

    kind: str
    title: str  # one line: "`step` compiled 10 times, once per new value of n (static)"
    location: Location | None  # the line to change (a call site, or the function's definition)
    cost_s: float  # seconds of this run's wall time it took (measured)
    change: str  # what to change, as a few words and a snippet
    gain_s: float  # seconds the change saves (see ``gain``)
    gain: str  # MEASURED, ESTIMATED or NOT_ESTIMATED
    gain_note: str  # how the gain was worked out, in words
    function: str = ""  # the jitted function it concerns, where there is one
    count: int = 0  # how many times it happened (recompiles, eager compiles, effect runs)
    arguments: tuple[str, ...] = ()  # the arguments whose cache-key component changed (recompiles)
    evidence: tuple[str, ...] = ()  # a few lines from the run that show it (causes, call sites)
    cost_bytes: int = 0  # a memory finding's cost: bytes at the compiled program's peak (see ``gain_note``)
    gain_bytes: int = 0  # bytes the change takes off the peak (see ``gain``)
    per_call_s: float = 0.0  # a device-time finding's cost: seconds of device time per call of the function


@dataclass(frozen=True, slots=True)
class TargetCall:
    """``jitscope doctor module:fn``: one call of the target, as ``bench`` timed it."""

    target: str
    call: str  # the arguments, "f32[8,128], n=2"
    first_call_s: float  # the cold call: trace, lower, compile and first run
    compile_s: float  # of which tracing, lowering and compiling
    cached_s: float  # a cached call, median


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """``jitscope doctor`` on a whole program: its outcome and the findings, worst first."""

    program: str  # "path/to/train.py" or "-m pkg.module"
    argv: tuple[str, ...]
    exit_code: int
    outcome: str  # "exited 0", "raised ValueError"
    wall_s: float  # the program's run, start to exit
    compile_s: float  # tracing, lowering and compiling, all functions (measured by the run's watch)
    compiles: int  # XLA compiles of the user's jitted functions
    findings: tuple[Finding, ...]  # above the noise floor, ranked
    below_floor: int = 0  # findings dropped as too small to matter (see ``noise_floor_s``)
    noise_floor_s: float = 0.0
    notes: tuple[str, ...] = ()
    jax_version: str | None = None
    #: Memory findings on the functions that cost the most, ranked apart by bytes at the peak.
    memory: tuple[Finding, ...] = ()
    #: The costliest functions' hottest device lines, most device time per call first.
    device: tuple[Finding, ...] = ()
    #: ``doctor module:fn``: the target's calls as bench timed them (empty for a program).
    calls: tuple[TargetCall, ...] = ()
    kind: str = "jitscope.doctor"
    schema_version: str = DOCTOR_SCHEMA_VERSION

    @property
    def avoidable_s(self) -> float:
        """Seconds the findings' changes would save in all (their gains, measured or estimated)."""
        return sum(f.gain_s for f in self.findings)

    @property
    def avoidable_share(self) -> float:
        """``avoidable_s`` as a share of the program's wall time (0 when it took no time)."""
        return min(self.avoidable_s / self.wall_s, 1.0) if self.wall_s > 0 else 0.0


def rank_key(finding: Finding) -> tuple[bool, float, int, str]:
    """Timed findings by cost, worst first, then the untimed ones."""
    return (finding.kind in UNTIMED, -finding.cost_s, -finding.count, finding.title)
