"""Records produced by ``jitscope profile``: device time per source line, per HLO op, and what is left over.

Every time is in seconds *per call* (the captured calls' total divided by their number), every
size in bytes; FLOPs and bytes are estimated from the HLO instruction shapes. Records hold no
JAX objects: the JSON document (``kind`` ``jitscope.profile``) round-trips through
``from_jsonable``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jitscope.model.bench import BenchFailure, Environment, TimingStats
from jitscope.model.common import OMITTED_WHEN_DEFAULT, Location
from jitscope.model.run import ProcessInfo

PROFILE_KIND = "jitscope.profile"
#: 1.1 added the device's published peaks (``ProfileRow.device_kind``, ``ProfileRow.peak``) and each line's
#: and op's share of them (``flops_peak_share``, ``bytes_peak_share``; ``OpRecord.dtype``); 1.0 documents
#: still load, with none.
PROFILE_SCHEMA_VERSION = "1.1"

#: How the time of one instruction that came from several lines (a fusion) is shared among them.
SPLIT_RULE = ("a fusion's time is split among the instructions fused into it in proportion to their estimated "
              "FLOPs (output elements for data movement; parameters, constants and scalar broadcasts get none); "
              "an unfused instruction's time goes to its own line")


@dataclass(frozen=True, slots=True)
class DevicePeak:
    """A device's published dense peaks (``profiling/peaks.py``): FLOP/s per element type, memory bytes/s."""

    device: str  # the table's name for it: "NVIDIA H100 SXM5"
    flops: dict[str, float]  # f64, f32, tf32 (f32 matmuls on tensor cores), bf16, f16; absent: none published
    bytes_per_second: float
    source: str  # the vendor document the figures come from


@dataclass(frozen=True, slots=True)
class NestedLine:
    """A line in another of the user's functions, reached from a listed line (a helper's body)."""

    location: Location
    seconds: float
    stack: tuple[Location, ...] = ()  # innermost first, up to the listed line


@dataclass(frozen=True, slots=True)
class LineRecord:
    """One source line of the profiled function (or, ``in_function`` False, a line outside it)."""

    location: Location
    seconds: float
    share: float  # of the device time of every op
    ops: float  # kernels / thunks per call that carried some of this line's work
    flops: float | None
    bytes: float | None
    flops_per_second: float | None
    bytes_per_second: float | None
    primitives: tuple[str, ...] = ()  # jaxpr primitives (dot_general, tanh ...)
    scopes: tuple[str, ...] = ()  # jit / named_scope paths the work ran in (jit(f)/attention)
    hlo_ops: tuple[str, ...] = ()  # the instructions (fusions) it ran in, most time first
    nested: tuple[NestedLine, ...] = ()  # lines of helpers called from this line
    in_function: bool = True
    # Achieved over the device's peak (None: device or element type not in the table, or no FLOPs):
    # the time the line's FLOPs would take at each one's element-type peak, over the line's time.
    flops_peak_share: float | None = None
    bytes_peak_share: float | None = None  # bytes_per_second over the peak memory bandwidth


@dataclass(frozen=True, slots=True)
class OpLine:
    location: Location
    share: float  # of the op's time


@dataclass(frozen=True, slots=True)
class OpRecord:
    """One HLO instruction as executed: a fusion, a library call, a copy, a collective."""

    name: str
    opcode: str
    category: str  # compute, collective, copy, control (events.classify_op)
    seconds: float
    share: float
    events: float  # executions per call (more than 1 inside a loop)
    flops: float | None
    bytes: float | None
    lines: tuple[OpLine, ...] = ()  # the source lines it came from, biggest share first
    fusion_kind: str = ""
    primitives: tuple[str, ...] = ()
    dtype: str = ""  # element type of its result (the first array of a tuple)
    flops_peak_share: float | None = None  # as LineRecord's
    bytes_peak_share: float | None = None


@dataclass(frozen=True, slots=True)
class Reconciliation:
    """Attributed and named parts of one call against the time ``bench`` measures for it."""

    measured: float  # median of cached calls timed as bench does (no profiler running)
    profiled_wall: float  # wall time per call of the captured calls (profiler running)
    lines: float  # device time attributed to source lines
    no_source: float  # device time of ops without source metadata
    idle: float  # device idle between the program's kernels / thunks
    copies: float  # device copies outside the program's ops (GPU memcpy)
    host: float  # measured - device span: dispatch, launch, argument handling, waiting for the result
    total: float
    difference: float  # (total - measured) / measured
    reconciles: bool  # |difference| <= tolerance
    tolerance: float = 0.10
    concurrency: float = 1.0  # op time / busy time: > 1 when thunks ran on several threads at once


@dataclass(frozen=True, slots=True)
class ProfileRow:
    target: str
    call: str
    function: Location  # where the profiled function starts (its def line)
    last_line: int  # its last line
    module: str  # the HLO module's name (jit_f)
    events_from: str  # "CPU thunks", "GPU kernels" ...
    calls: int  # calls captured
    lines: tuple[LineRecord, ...]
    ops: tuple[OpRecord, ...]
    reconciliation: Reconciliation
    cached: TimingStats
    label: str = ""
    statics: dict[str, str] = field(default_factory=dict)
    split_rule: str = SPLIT_RULE
    warnings: tuple[str, ...] = ()
    device_kind: str = ""  # as JAX names the device ("NVIDIA H100 80GB HBM3", "cpu"); "" in 1.0 documents
    peak: DevicePeak | None = None  # its published peaks, where profiling/peaks.py knows the device

    @property
    def device_time(self) -> float:
        return sum(op.seconds for op in self.ops)


@dataclass(frozen=True, slots=True)
class ProfileSettings:
    calls: int
    budget: float
    seed: int
    trace_out: str | None = None
    #: ``profile --processes``: every process timed exactly this many rounds of one call (``ProfileOptions``).
    lockstep_rounds: int | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@dataclass(frozen=True, slots=True)
class ProfileReport:
    """The versioned JSON document of ``jitscope profile --format json``."""

    rows: tuple[ProfileRow, ...]
    settings: ProfileSettings
    environment: Environment = field(default_factory=dict)
    failures: tuple[BenchFailure, ...] = ()
    warnings: tuple[str, ...] = ()
    schema_version: str = PROFILE_SCHEMA_VERSION
    kind: str = PROFILE_KIND
    #: Which process of a multi-process program (``profile --processes``) profiled this; left out for one process.
    process: ProcessInfo | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
