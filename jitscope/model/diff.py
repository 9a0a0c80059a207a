"""Records of ``jitscope diff``: what a change did to the compiled program, call by call.

A ``DiffReport`` compares two sides (``old`` and ``new``), each a ``jitscope trace`` report of the
same function before and after a change (another git revision, another file, another environment).
Everything here is plain data built from two ``TraceReport`` records (``jitscope/comparison/``): the lines
of the user's code whose equations changed, primitive counts, the optimised HLO's instructions and
collectives added or removed, cost, memory and compile-time figures side by side, and the CI gates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from jitscope.model.common import OMITTED_WHEN_DEFAULT
from jitscope.model.keys import KeyDiff

#: Version of the ``jitscope.diff`` document. 1.1: ``CallDiff.bench`` filled by ``--bench``
#: (alternating processes: per-round medians of both sides, the change, the noise and the verdict).
DIFF_SCHEMA_VERSION = "1.1"
#: 1.1 plus ``CallDiff.memory`` (``--memory``) and ``CallDiff.keys``/``DiffReport.compiles`` (recompilation).
#: Those fields are left out while empty, so a document without them stays 1.1 byte for byte
#: (``schema_for`` picks the version; 1.1 readers of a 1.2 document only miss the new sections).
DIFF_SCHEMA_VERSION_KEYS_MEMORY = "1.2"
#: 1.2 plus ``CallDiff.compile_time`` (the compile by phase and by line on both sides), left out while None.
DIFF_SCHEMA_VERSION_COMPILE_TIME = "1.3"

ChangeKind = Literal["added", "removed", "changed", "moved"]
Unit = Literal["count", "bytes", "seconds", "flops"]


@dataclass(frozen=True, slots=True)
class SideInfo:
    """One side of the comparison: what was traced, where, and whether it failed."""

    label: str  # "HEAD~1", "working tree", "old.py:f", "/venv/bin/python"
    target: str
    call: str = ""
    #: JAX, jaxlib, backend, device count ... of the process that traced it (``TraceReport.environment``).
    environment: dict[str, str | int | bool] = field(default_factory=dict)
    #: The explained failure when the user's code failed to trace on this side ("" when it traced).
    failure: str = ""
    failure_where: str = ""  # file:line of the failure


@dataclass(frozen=True, slots=True)
class LineChange:
    """A line of the user's code whose equations differ, or that moved.

    Lines are aligned by what they compute (their equations' primitives, parameters and types, not
    variable names), so a rename changes nothing and a moved line is one ``moved`` entry.
    """

    kind: ChangeKind
    old_file: str = ""  # relative to the side's root where possible
    old_line: int = 0
    new_file: str = ""
    new_line: int = 0
    old_source: str = ""
    new_source: str = ""
    #: Equations only on one side, as ``dot_general f32[8,16], f32[16,4] -> f32[8,4]`` (nested ones included).
    removed_eqns: tuple[str, ...] = ()
    added_eqns: tuple[str, ...] = ()
    #: Where the line's equations sit: "" at the top level, "scan body", "while body > cond branch" ...
    context: str = ""

    @property
    def old_where(self) -> str:
        return f"{self.old_file}:{self.old_line}" if self.old_line else ""

    @property
    def new_where(self) -> str:
        return f"{self.new_file}:{self.new_line}" if self.new_line else ""


@dataclass(frozen=True, slots=True)
class CountDelta:
    """One name counted on both sides (a primitive, an HLO opcode)."""

    name: str
    old: int
    new: int


@dataclass(frozen=True, slots=True)
class HloChange:
    """Optimised-HLO instructions present on one side only, matched by op, shape, jaxpr primitive and loop
    nesting, never by XLA's generated names (which change on every edit)."""

    kind: Literal["added", "removed"]
    opcode: str  # "fusion", "dot", "all-gather", "while" ...
    shape: str  # "f32[8,4]"
    primitive: str = ""  # the jaxpr primitive of JAX's op_name metadata: "dot_general"
    #: A fusion's content: the operations fused into it, e.g. "dot, tanh".
    fused: str = ""
    count: int = 1
    in_loop: bool = False
    file: str = ""
    line: int = 0

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else ""


@dataclass(frozen=True, slots=True)
class CollectiveChange:
    """A collective (all-gather, all-reduce, ...) present on one side only."""

    kind: Literal["added", "removed"]
    collective: str  # one of model.sharding.COLLECTIVE_KINDS
    dtype: str
    shape: tuple[int, ...]
    send_bytes: int  # per device, per execution
    recv_bytes: int
    in_loop: bool = False
    file: str = ""
    line: int = 0
    count: int = 1

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else ""


@dataclass(frozen=True, slots=True)
class Metric:
    """A figure measured on both sides (None where a side does not have it)."""

    name: str  # "flops", "peak", "compile-time" ... (the names ``--fail-on`` takes)
    label: str  # "FLOPs", "peak memory", "compile time"
    old: float | None
    new: float | None
    unit: Unit = "count"
    #: Timings vary from run to run: shown, never counted as a change of the program.
    noisy: bool = False

    @property
    def change(self) -> float | None:
        """Relative change, new / old - 1; None when a side has no figure or old is 0 and new is not."""
        if self.old is None or self.new is None:
            return None
        if self.old == 0:
            return 0.0 if self.new == 0 else None
        return self.new / self.old - 1


@dataclass(frozen=True, slots=True)
class BenchSide:
    """One side's figures from each round of ``--bench`` (seconds; one value per round)."""

    cached: tuple[float, ...]  # median cached-call time of the round (every call blocked on every output)
    cold: tuple[float, ...]  # the round's first call: trace, lower, compile and first run

    @property
    def median(self) -> float:
        """The median over rounds of the cached-call time."""
        import statistics

        return statistics.median(self.cached)


@dataclass(frozen=True, slots=True)
class BenchComparison:
    """``--bench``: one call's cached-call time on both sides, measured alternately, and the verdict."""

    call: str
    old: BenchSide
    new: BenchSide
    change: float  # (new median - old median) / old median, over rounds
    noise: float  # the larger side's spread between its rounds (max/min - 1)
    verdict: str  # "faster", "slower" or "same" (no difference beyond the noise)

    @property
    def rounds(self) -> int:
        return len(self.old.cached)

    @property
    def ratio(self) -> float:
        """new / old, of the medians over rounds."""
        return 1 + self.change


@dataclass(frozen=True, slots=True)
class GateResult:
    """One ``--fail-on`` threshold, checked."""

    rule: str  # as written: "flops>+10%"
    crossed: bool
    message: str  # "flops +25.0% (1.06 kFLOP -> 1.32 kFLOP), over +10%"


@dataclass(frozen=True, slots=True)
class MemoryLine:
    """Bytes live at the peak that one line of the user's code made, on both sides (``--memory``).

    Lines are aligned as the jaxpr comparison aligns them (a renamed or moved line is the same line);
    otherwise the same file and the same text. A side without the line has 0 bytes and no location.
    """

    old_file: str
    old_line: int
    new_file: str
    new_line: int
    source: str  # the line's text (the new side's where both have it)
    old_bytes: int
    new_bytes: int
    #: Of those, saved by the forward pass for the backward pass (residuals; 0 where not shown).
    old_residual: int = 0
    new_residual: int = 0
    primitives: tuple[str, ...] = ()  # what made its bytes (the side with more first)

    @property
    def change(self) -> int:
        return self.new_bytes - self.old_bytes

    @property
    def old_where(self) -> str:
        return f"{self.old_file}:{self.old_line}" if self.old_line else ""

    @property
    def new_where(self) -> str:
        return f"{self.new_file}:{self.new_line}" if self.new_line else ""


@dataclass(frozen=True, slots=True)
class MemoryComparison:
    """``--memory``: each side's ``jitscope memory`` (XLA's buffer assignment) of one call, compared."""

    old_peak: int  # bytes live at the peak: the exact figure (arguments included)
    new_peak: int
    old_reserved: int  # arguments + outputs - aliased + temporaries: what the executable needs on the device
    new_reserved: int
    old_arguments: int
    new_arguments: int
    #: The lines whose bytes at the peak differ, largest change first.
    lines: tuple[MemoryLine, ...] = ()
    #: Lines with the same bytes at the peak on both sides.
    same: int = 0
    #: Saved for the backward pass, live at the peak; None where a side's JAX does not mark the backward
    #: pass (jax 0.4.x: residuals are not shown).
    old_residual: int | None = None
    new_residual: int | None = None
    #: Where each peak is: the line of the instruction that runs there ("" when it has none).
    old_peak_at: str = ""
    new_peak_at: str = ""
    notes: tuple[str, ...] = ()

    @property
    def change(self) -> float | None:
        return self.new_peak / self.old_peak - 1 if self.old_peak else None


@dataclass(frozen=True, slots=True)
class ArgumentChange:
    """An argument that the compile cache treats differently on the two sides."""

    argument: str  # "n", "params"
    old: str  # "traced ~i32[]", "static (1)", "donated", "absent"
    new: str
    #: What it does to recompiles, in words: "a recompile per distinct value of n".
    effect: str = ""


@dataclass(frozen=True, slots=True)
class KeyComparison:
    """One call's compile-cache key on both sides: what JAX keys it on, and whether the call compiles."""

    #: The earlier call of the sequence this one reuses the compile of; 0 when it compiles.
    old_hit_of: int = 0
    new_hit_of: int = 0
    #: Components of the two keys that differ ("n: dtype", "n (static): value").
    diffs: tuple[KeyDiff, ...] = ()
    #: The same, per argument, with what each change does to recompiles.
    arguments: tuple[ArgumentChange, ...] = ()
    #: Why the call compiles again on a side: the components that differ from its nearest earlier compile.
    old_cause: tuple[KeyDiff, ...] = ()
    new_cause: tuple[KeyDiff, ...] = ()
    #: Static arguments and donated arguments of each side, as jit was told them.
    old_statics: tuple[str, ...] = ()
    new_statics: tuple[str, ...] = ()
    old_donated: tuple[str, ...] = ()
    new_donated: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.diffs or self.arguments or (self.old_hit_of == 0) != (self.new_hit_of == 0))


@dataclass(frozen=True, slots=True)
class CompileTimeDiff:
    """The compile by line of the user's code and (``--compile-profile``) by XLA phase, on both sides (schema
    1.3). Lines are matched by file and source text, so a line that moved is still itself."""

    #: Optimised-HLO instructions per line (``name`` = ``line:FILE:TEXT``, ``label`` = the new side's ``file:line``).
    lines: tuple[Metric, ...] = ()
    #: Seconds per line (measured parts plus XLA's rest split by instructions) and per XLA phase; noisy.
    line_seconds: tuple[Metric, ...] = ()
    phases: tuple[Metric, ...] = ()


@dataclass(frozen=True, slots=True)
class CompileCounts:
    """How many of the calls compared compile on each side (the rest reuse an earlier compile)."""

    calls: int
    old: int
    new: int
    #: The arguments whose handling changed in any call, with their effect (one entry per argument).
    arguments: tuple[ArgumentChange, ...] = ()


@dataclass(frozen=True, slots=True)
class CallDiff:
    """One call of the target compared on both sides."""

    target: str  # the function, as the new side names it
    call: str
    old: SideInfo
    new: SideInfo
    changes: tuple[LineChange, ...] = ()
    #: Lines whose text changed but whose equations did not (renames, comments, formatting).
    edited_same: int = 0
    #: Lines of the user's code with equations on both sides and no change.
    unchanged: int = 0
    primitives: tuple[CountDelta, ...] = ()  # only the primitives whose count changed
    hlo: tuple[HloChange, ...] = ()
    #: Instructions matched on both sides, and fusions whose operations are the same but grouped
    #: differently ("2 fusions -> 1").
    hlo_matched: int = 0
    fusion_note: str = ""
    collectives: tuple[CollectiveChange, ...] = ()
    metrics: tuple[Metric, ...] = ()
    bench: BenchComparison | None = None
    notes: tuple[str, ...] = ()
    #: ``--memory``: bytes at the peak by line on both sides (schema 1.2; left out while None).
    memory: MemoryComparison | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    #: The compile-cache keys of both sides (schema 1.2; left out while None, as for a failed side).
    keys: KeyComparison | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    #: The compile by line and by XLA phase on both sides (schema 1.3; left out while None).
    compile_time: CompileTimeDiff | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def failed(self) -> bool:
        return bool(self.old.failure or self.new.failure)

    @property
    def program_changed(self) -> bool:
        """Anything but timings differs."""
        return bool(self.changes or self.primitives or self.hlo or self.collectives or self.fusion_note
                    or any(m.old != m.new for m in self.metrics if not m.noisy)
                    or (self.memory is not None and bool(self.memory.lines)))


@dataclass(frozen=True, slots=True)
class DiffReport:
    """The versioned JSON document of ``jitscope diff --format json``."""

    old_label: str
    new_label: str
    calls: tuple[CallDiff, ...]
    gates: tuple[GateResult, ...] = ()
    notes: tuple[str, ...] = ()
    schema_version: str = DIFF_SCHEMA_VERSION
    kind: str = "jitscope.diff"
    #: Compiles on each side over the calls compared, when the keys differ anywhere (schema 1.2).
    compiles: CompileCounts | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


def schema_for(report: DiffReport) -> str:
    """1.3 with a compile-time comparison, 1.2 when the document carries a 1.2 field, else 1.1 (the same bytes
    as before them)."""
    if any(c.compile_time is not None for c in report.calls):
        return DIFF_SCHEMA_VERSION_COMPILE_TIME
    new = report.compiles is not None or any(c.memory is not None or c.keys is not None for c in report.calls)
    return DIFF_SCHEMA_VERSION_KEYS_MEMORY if new else DIFF_SCHEMA_VERSION
