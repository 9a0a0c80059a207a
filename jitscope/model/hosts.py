"""Records of ``jitscope merge``: one multi-process program's ``jitscope run`` reports, side by side.

Built from the per-process ``RunRecord`` documents (schema 1.3: ``RunRecord.process``) by
``hosts/merge.py``; the JSON document is ``to_jsonable(MergeReport)`` (kind ``jitscope.merge``).
Processes are named by their index everywhere ("p1"); ``ProcessRow`` says which host each was.
"""

from __future__ import annotations

from dataclasses import dataclass

from jitscope.model.common import Location
from jitscope.model.effects import EffectRecord

#: Version of the ``jitscope.merge`` JSON document; bump the major number on a breaking change.
MERGE_SCHEMA_VERSION = "1.0"

#: ``Finding.level``: the job hangs or computes the wrong thing / costs time / worth knowing.
HANG, SLOW, INFO = "hang", "slow", "info"


@dataclass(frozen=True, slots=True)
class ProcessRow:
    """One process: where it ran and how it ended."""

    index: int
    host: str
    file: str  # the report it came from
    local_devices: tuple[str, ...]
    outcome: str  # "exited 0", "raised ValueError", "still running after 12.0 s (a partial report ...)"
    exit_code: int
    partial: bool  # the process never wrote its final report: hung or killed
    wall_s: float
    compiles: int  # of the user's functions
    compile_s: float  # trace + lower + compile of the user's functions
    internal_compiles: int  # JAX's own (eager op-by-op) compiles
    #: The last compile of the user's code it reported: "apply_update compile 2 at 11.90 s".
    last_compile: str = ""
    jax_version: str | None = None
    pid: int = 0
    started_unix: float = 0.0


@dataclass(frozen=True, slots=True)
class ProcessCompile:
    """One process's part in a compile: when, how long, why, and what it built."""

    process: int
    number: int  # this function's n-th compile on that process
    at_s: float  # seconds after that process started, when the compile began
    #: Seconds after the first process to begin this compile began it (on the hosts' wall clocks).
    behind_s: float
    trace_s: float
    lower_s: float
    compile_s: float
    call_site: Location | None = None
    #: Why it compiled again there ("" for the function's first compile): the cache-key components that changed.
    cause: str = ""
    changed: tuple[str, ...] = ()  # the components of ``cause`` by name only: ("x: shape", "y: shape")
    fingerprint: str = ""  # of the optimised HLO, "" when not recorded
    effects: tuple[EffectRecord, ...] = ()

    @property
    def total_s(self) -> float:
        return self.trace_s + self.lower_s + self.compile_s


@dataclass(frozen=True, slots=True)
class ProgramDifference:
    """Where the programs of two groups of processes first differ (canonical HLO, metadata removed)."""

    reference: tuple[int, ...]  # the processes of the most common program
    processes: tuple[int, ...]  # the processes that built this other one
    reference_fingerprint: str
    fingerprint: str
    computation: str  # the HLO computation of the first differing line ("" before any)
    line: int  # 1-based, in the canonical text
    reference_text: str  # the line on the reference processes ("" when their program ended there)
    text: str  # the line on the other processes
    reference_source: Location | None = None  # the user's line that op came from, where XLA kept it
    source: Location | None = None
    context: tuple[str, ...] = ()  # the lines just before, equal on both
    #: The collectives in each program ("all-reduce x2"): when they differ, the processes wait in ones that never
    #: match (a hang); when they agree, the job runs but the processes compute different things.
    reference_collectives: tuple[str, ...] = ()
    collectives: tuple[str, ...] = ()
    #: ``source`` and ``reference_source`` are of a nearby instruction (the differing line had no metadata).
    source_nearby: bool = False
    #: Why no line could be shown: "" when one is, else e.g. "the HLO was not kept".
    unavailable: str = ""


@dataclass(frozen=True, slots=True)
class Skew:
    """One figure across processes: the fastest, the median, the slowest, and who."""

    min_s: float
    median_s: float
    max_s: float
    fastest: int
    slowest: int


@dataclass(frozen=True, slots=True)
class MergedCompile:
    """One compile of one function, lined up across the processes that made it.

    Compiles line up by function, signature and occurrence: the k-th compile of ``step`` with
    ``x: f32[8,4]`` on one process is the k-th with that signature on every other.
    """

    function: str
    defined_at: Location | None
    kind: str
    signature: str
    occurrence: int  # 1 for the first compile with this signature, 2 when it compiled again with the same one
    processes: tuple[ProcessCompile, ...]
    missing: tuple[int, ...]  # processes where it did not happen
    #: Each program built, by fingerprint, with the processes that built it (most processes first).
    programs: tuple[tuple[str, tuple[int, ...]], ...] = ()
    differences: tuple[ProgramDifference, ...] = ()
    #: The collectives in the program ("all-reduce x2"): the operations every process must reach together.
    collectives: tuple[str, ...] = ()
    compile_skew: Skew | None = None
    arrival_skew: Skew | None = None  # of ``behind_s``: who began it last
    effects_differ: bool = False

    @property
    def same_program(self) -> bool | None:
        """All processes built one program (None: fewer than two fingerprints to compare)."""
        known = sum(len(p) for _, p in self.programs)
        return None if known < 2 else len(self.programs) == 1


@dataclass(frozen=True, slots=True)
class FunctionRow:
    """One function's compiles and compile time on each process (aligned with ``MergeReport.processes``)."""

    function: str
    defined_at: Location | None
    kind: str
    compiles: tuple[int, ...]
    total_s: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing to read first, worst first: ``level`` is HANG, SLOW or INFO."""

    level: str
    what: str  # "program-mismatch", "one-process-compile", "partial", "exit", "compile-straggler",
    #            "arrival-straggler", "effects", "versions"
    text: str
    processes: tuple[int, ...] = ()
    function: str = ""


@dataclass(frozen=True, slots=True)
class MergeReport:
    """Every process's run of one program, merged."""

    program: str
    argv: tuple[str, ...]
    process_count: int
    processes: tuple[ProcessRow, ...]
    findings: tuple[Finding, ...]
    functions: tuple[FunctionRow, ...]
    compiles: tuple[MergedCompile, ...]
    notes: tuple[str, ...] = ()
    kind: str = "jitscope.merge"
    schema_version: str = MERGE_SCHEMA_VERSION


#: Kind of the merged document of ``bench --processes`` / ``jitscope merge bench.p*.json``.
BENCH_MERGE_KIND = "jitscope.merge.bench"


@dataclass(frozen=True, slots=True)
class BenchProcess:
    """One process of a multi-process bench: where it ran, and the report it wrote."""

    index: int
    host: str
    local_devices: tuple[str, ...]
    file: str


@dataclass(frozen=True, slots=True)
class BenchFigures:
    """One call's figures on one process."""

    process: int
    cached_median_s: float  # blocked cached calls
    cached_q1_s: float
    cached_q3_s: float
    rounds: int
    cold_s: float  # the first call, whole (median of --cold-runs)
    compile_s: float | None  # its XLA compile (None where JAX emitted no event)
    #: This process's compile times across --cold-runs, slowest / fastest (None with one cold run).
    compile_spread: float | None = None


@dataclass(frozen=True, slots=True)
class BenchSkew:
    """One figure across processes: slowest / fastest, who, and whether that is beyond the processes' own
    spread (for cached calls: the widest q3/q1 of any process's rounds; for compiles: of its cold runs)."""

    ratio: float
    fastest: int
    slowest: int
    spread: float | None  # None: unknown (one cold run per process)
    flagged: bool


@dataclass(frozen=True, slots=True)
class MergedBenchCall:
    """One benchmarked call, its figures on every process side by side."""

    target: str
    call: str
    label: str
    figures: tuple[BenchFigures, ...]
    cached: BenchSkew | None
    compile: BenchSkew | None
    failed_on: tuple[int, ...] = ()  # processes where the call raised (no figures there)


@dataclass(frozen=True, slots=True)
class BenchMergeReport:
    """Every process's bench report of one ``bench --processes`` run, merged."""

    process_count: int
    processes: tuple[BenchProcess, ...]
    calls: tuple[MergedBenchCall, ...]
    findings: tuple[Finding, ...]
    rounds: int | None  # the lockstep rounds every process timed
    notes: tuple[str, ...] = ()
    kind: str = BENCH_MERGE_KIND
    schema_version: str = MERGE_SCHEMA_VERSION


#: Kind of the merged document of ``profile --processes`` / ``jitscope merge profile.p*.json``.
PROFILE_MERGE_KIND = "jitscope.merge.profile"


@dataclass(frozen=True, slots=True)
class ProfileTotals:
    """One call's device time on one process, per call, and how it splits (``OpRecord.category``)."""

    process: int
    device_s: float  # every op of the program
    compute_s: float
    collective_s: float  # communication: all-reduce, all-gather ... (waiting for the other processes included)
    other_s: float  # copies and control flow
    measured_s: float  # the cached calls' median without the profiler (lockstep rounds)
    measured_q1_s: float
    measured_q3_s: float
    reconciles: bool  # the parts add up to ``measured_s`` within profile's tolerance


@dataclass(frozen=True, slots=True)
class LineFigures:
    """One source line's device time on one process, per call."""

    process: int
    seconds: float
    share: float  # of that process's device time


@dataclass(frozen=True, slots=True)
class MergedLine:
    """One source line, its time on every process side by side (0 where a process spent none there)."""

    location: Location
    figures: tuple[LineFigures, ...]
    skew: BenchSkew | None  # slowest / fastest; flagged as for ``ProfileMergeReport`` below
    in_function: bool = True


@dataclass(frozen=True, slots=True)
class MergedProfileCall:
    """One profiled call: each process's totals and its top source lines side by side."""

    target: str
    call: str
    label: str
    totals: tuple[ProfileTotals, ...]
    device: BenchSkew | None  # of device_s
    compute: BenchSkew | None  # of compute_s: the slowest is the one the others wait for in collectives
    lines: tuple[MergedLine, ...]
    failed_on: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ProfileMergeReport:
    """Every process's profile report of one ``profile --processes`` run, merged.

    A skew is flagged when it is beyond the processes' own spread (the widest q3/q1 of any process's
    cached rounds) and, for a line or the compute time, when the difference is at least
    ``min_share`` of the slowest process's device time (so microsecond lines do not count).
    """

    process_count: int
    processes: tuple[BenchProcess, ...]
    calls: tuple[MergedProfileCall, ...]
    findings: tuple[Finding, ...]
    rounds: int | None  # the lockstep rounds every process timed without the profiler
    captured: int  # calls each process ran under the profiler
    min_share: float
    notes: tuple[str, ...] = ()
    kind: str = PROFILE_MERGE_KIND
    schema_version: str = MERGE_SCHEMA_VERSION


#: Kind of the merged document of ``trace --processes`` / ``jitscope merge trace.p*.json``.
TRACE_MERGE_KIND = "jitscope.merge.trace"


@dataclass(frozen=True, slots=True)
class TraceFigures:
    """One call's trace and compile on one process, and the program it built."""

    process: int
    trace_s: float
    lower_s: float | None
    compile_s: float | None
    fingerprint: str  # "" when it did not compile (a trace error, --stages without hlo)
    failed: str = ""  # the trace error's message, when tracing failed there


@dataclass(frozen=True, slots=True)
class MergedTraceCall:
    """One traced call, lined up across processes: same program or not, compile time side by side."""

    target: str
    call: str
    figures: tuple[TraceFigures, ...]
    #: Each program built, by fingerprint, with the processes that built it (most processes first).
    programs: tuple[tuple[str, tuple[int, ...]], ...]
    differences: tuple[ProgramDifference, ...]
    collectives: tuple[str, ...]  # in the most common program
    compile: BenchSkew | None  # of compile_s: bench's compile rule (one compile each: >= 1.5x and 0.25 s)

    @property
    def same_program(self) -> bool | None:
        known = sum(len(p) for _, p in self.programs)
        return None if known < 2 else len(self.programs) == 1


@dataclass(frozen=True, slots=True)
class TraceMergeReport:
    """Every process's trace report of one ``trace --processes`` run, merged."""

    process_count: int
    processes: tuple[BenchProcess, ...]
    calls: tuple[MergedTraceCall, ...]
    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()
    kind: str = TRACE_MERGE_KIND
    schema_version: str = MERGE_SCHEMA_VERSION
