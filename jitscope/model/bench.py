"""Records produced by ``jitscope bench``: the cold first call, cached calls, and what they mean.

Every time is in seconds and every size in bytes. Records hold no JAX objects, so a
saved report (``--save``) can be re-read (``--compare``) and re-rendered without jax.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jitscope.model.common import OMITTED_WHEN_DEFAULT
from jitscope.model.compile import CompileTimeRecord
from jitscope.model.run import ProcessInfo
from jitscope.model.trace import CostRecord, MemoryRecord

BENCH_KIND = "jitscope.bench"
#: Version of the ``jitscope.bench`` document. 1.1: ``environment.device_count`` is an int and
#: ``environment.x64`` a bool (both were strings); new ``failures``, ``cached.steady_state``,
#: ``eager.steady_state`` and ``settings.max_warmup``. 1.2: ``cached.called``, ``cached.compiled`` and
#: ``cached.wrapper_overhead`` (a library wrapper's call timed as the user makes it, its compiled program
#: alone, and the wrapper's own per-call work). 1.3: each row's ``compile_time`` (``--compile-profile``; left
#: out while None). 1.0 documents still
#: load as baselines.
BENCH_SCHEMA_VERSION = "1.3"
#: A wrapper's own per-call work is worth a line in the report when it exceeds this share of the compiled
#: program's time, or this many seconds, per call (``CachedRecord.wrapper_overhead_large``).
WRAPPER_OVERHEAD_SHARE = 0.10
WRAPPER_OVERHEAD_SECONDS = 20e-6
#: The comparison metric of the device memory a program needs (bytes; the others are seconds).
MEMORY_METRIC = "device memory"
#: What the environment dict holds: versions, backend and device kind are strings, the rest are not.
Environment = dict[str, str | int | bool]


@dataclass(frozen=True, slots=True)
class TimingStats:
    """Per-call times over ``rounds`` rounds of ``loops`` calls each (one sample per round)."""

    rounds: int
    loops: int
    min: float
    max: float
    mean: float
    stddev: float  # sample standard deviation (n - 1); 0.0 for a single round
    median: float
    q1: float
    q3: float
    iqr: float
    outliers_iqr: int  # rounds outside [q1 - 1.5 IQR, q3 + 1.5 IQR]
    outliers_stddev: int  # rounds outside mean +/- 1 stddev
    total_seconds: float  # time spent inside timed rounds
    unreliable: bool  # max >= 4 x min: something else was competing for the machine
    samples: tuple[float, ...] = ()  # per-call time of each round, in the order measured

    @property
    def calls(self) -> int:
        return self.rounds * self.loops


@dataclass(frozen=True, slots=True)
class ColdRun:
    """One first call on a fresh jit wrapper after JAX's in-memory caches were cleared.

    ``trace``, ``lower`` and ``compile`` come from JAX's monitoring events (None when JAX
    emitted none); ``first_run`` runs from the end of the XLA compile until every output leaf
    was ready. ``unattributed`` is what is left of ``total``: argument handling, jaxpr
    simplification and executable setup that no event covers.
    """

    total: float
    returned: float  # when the call gave control back to Python (outputs possibly not ready)
    trace: float | None = None
    lower: float | None = None
    compile: float | None = None
    first_run: float | None = None
    unattributed: float | None = None
    compiles: int = 0  # XLA compiles during the call (more than 1: eager ops ran while tracing)
    cache_hit: bool | None = None  # persistent compilation cache; None when the cache is off


@dataclass(frozen=True, slots=True)
class ColdRecord:
    """``--cold-runs K`` cold calls and their per-phase median."""

    runs: tuple[ColdRun, ...]
    median: ColdRun


@dataclass(frozen=True, slots=True)
class ProcessRun:
    """A truly cold call: a new Python process that imports jax, loads the target and calls it once."""

    wall: float  # measured by the parent, from starting the process until its result was read
    import_jax: float
    load_target: float
    make_inputs: float
    first_call: ColdRun
    startup: float  # wall minus what the child measured: interpreter start, jitscope import, exit


@dataclass(frozen=True, slots=True)
class ProcessRecord:
    runs: tuple[ProcessRun, ...]
    median_wall: float


@dataclass(frozen=True, slots=True)
class SteadyState:
    """Whether warm-up reached a steady state before the timed rounds (rule: ``jitscope.timing.steady``)."""

    reached: bool
    windows: int  # warm-up windows timed (2 when the first two already agreed)
    seconds: float  # time spent in warm-up windows
    change: float | None  # |difference| of the last two windows' medians / the smaller one
    tolerance: float  # windows agree when change <= tolerance


@dataclass(frozen=True, slots=True)
class CachedRecord:
    """Calls on the compiled wrapper, with concrete device arrays created before timing."""

    blocked: TimingStats  # every call blocks on every output leaf
    dispatch: TimingStats | None  # the same call, timed only until it returns (not blocked)
    warmup_calls: int
    output_leaves: int  # array leaves blocked on after each call (0: waits on effects only)
    fresh_inputs: bool = False  # donated arguments: each call gets fresh copies, made outside the timing
    steady_state: SteadyState | None = None  # None in reports written before jitscope measured it
    #: "" when ``blocked`` times jitscope's ``jax.jit`` of the function (the same call as the user's
    #: ``jax.jit`` wrapper, or ``jax.jit(fn)`` of a plain function); else the library wrapper whose call, as
    #: the user makes it, ``blocked`` times ("equinox.filter_jit", "flax.nnx.jit"): its Python included.
    called: str = field(default="", metadata=OMITTED_WHEN_DEFAULT)
    #: With ``called``: the compiled program alone (jitscope's jax.jit of the function), timed the same way,
    #: its rounds alternating with rounds of the wrapper's call.
    compiled: TimingStats | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    #: With ``called``: the wrapper's own per-call work, the median over those pairs of rounds of (the
    #: wrapper's call - the program alone), so both sides saw the same load; None: not measured.
    wrapper_overhead: float | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def wrapper_overhead_large(self) -> bool:
        overhead = self.wrapper_overhead
        return overhead is not None and self.compiled is not None and (
            overhead > WRAPPER_OVERHEAD_SECONDS or overhead > WRAPPER_OVERHEAD_SHARE * self.compiled.median)


@dataclass(frozen=True, slots=True)
class EagerRecord:
    """The un-jitted function, called op by op (``--eager``)."""

    stats: TimingStats | None
    speedup: float | None  # eager median / jit median
    error: str | None = None
    steady_state: SteadyState | None = None


@dataclass(frozen=True, slots=True)
class DerivedRecord:
    """Figures computed from the measurements."""

    cold_in_calls: float | None  # (cold total - cached median) / cached median: the first call costs N calls
    breakeven_calls: float | None  # calls after which jit + compile beats eager (needs --eager)
    flops_per_second: float | None  # XLA cost analysis flops / cached median
    bytes_per_second: float | None  # XLA cost analysis bytes accessed / cached median


@dataclass(frozen=True, slots=True)
class BenchRow:
    """One target called with one set of arguments (one shape set, one static variant)."""

    target: str
    call: str  # the argument spec, e.g. "f32[8,128], n=2"
    label: str
    statics: dict[str, str]  # static name -> repr(value)
    input_bytes: int
    cold: ColdRecord
    cached: CachedRecord
    derived: DerivedRecord
    process: ProcessRecord | None = None
    eager: EagerRecord | None = None
    cost: CostRecord | None = None
    memory: MemoryRecord | None = None
    device_peak_bytes: int | None = None  # device-wide peak since the process started, where reported
    warnings: tuple[str, ...] = ()
    #: ``--compile-profile``: the cold call's compile by XLA phase and by line of the user's code (schema 1.3);
    #: left out while None.
    compile_time: CompileTimeRecord | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def key(self) -> str:
        """How ``--compare`` matches this row with a baseline's."""
        return f"{self.target}({self.call})" + (f" [{self.label}]" if self.label else "")


@dataclass(frozen=True, slots=True)
class BenchFailure:
    """A call that failed: the run records it and goes on with the next one."""

    target: str
    call: str
    label: str
    error: str  # one line, e.g. "m.py:f(f32[3]) failed on its first call: RuntimeError: ..."
    hint: str | None = None  # a fix, where jitscope knows one
    detail: str | None = None  # the user's frames of the traceback

    @property
    def key(self) -> str:
        return f"{self.target}({self.call})" + (f" [{self.label}]" if self.label else "")


@dataclass(frozen=True, slots=True)
class ScalingPoint:
    call: str
    input_bytes: int
    run_seconds: float  # cached median
    compile_seconds: float | None


@dataclass(frozen=True, slots=True)
class ScalingRecord:
    """How run and compile time grow with input size: slopes of log(time) against log(bytes)."""

    target: str
    variant: str  # statics shared by the points, e.g. "n=2", or ""
    points: tuple[ScalingPoint, ...]
    run_slope: float | None
    compile_slope: float | None


@dataclass(frozen=True, slots=True)
class ComparisonEntry:
    key: str
    metric: str  # "cached median" or "compile"
    baseline: float | None
    current: float | None
    change: float | None  # current / baseline - 1
    status: str  # "regression", "improvement", "same", "new", "missing"


@dataclass(frozen=True, slots=True)
class ComparisonRecord:
    baseline: str
    threshold: float  # 0.1 for 10%
    entries: tuple[ComparisonEntry, ...]
    regressions: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BenchSettings:
    """How the numbers were taken, so a saved report says what it measured."""

    budget: float
    min_rounds: int
    cold_runs: int
    cold_process: bool
    eager: bool
    seed: int
    persistent_cache: str  # "off", or the cache directory
    persistent_cache_source: str  # "default", "flag" or "jax config"
    clock: str
    clock_resolution: float
    harness_overhead: float | None  # per call: the timed loop around a call that returns a ready array
    max_warmup: float | None = None  # seconds of warm-up allowed while waiting for a steady state
    #: ``bench --processes``: every process timed exactly this many rounds of one call (``BenchOptions``).
    lockstep_rounds: int | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@dataclass(frozen=True, slots=True)
class BenchReport:
    """The versioned JSON document of ``jitscope bench --format json``."""

    rows: tuple[BenchRow, ...]
    settings: BenchSettings
    environment: Environment = field(default_factory=dict)
    scaling: tuple[ScalingRecord, ...] = ()
    comparison: ComparisonRecord | None = None
    warnings: tuple[str, ...] = ()
    failures: tuple[BenchFailure, ...] = ()  # calls that raised; they have no row
    schema_version: str = BENCH_SCHEMA_VERSION
    kind: str = BENCH_KIND
    #: Which process of a multi-process program (``bench --processes``) measured this; left out for one process.
    process: ProcessInfo | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
