"""Records produced by ``jitscope memory``: what holds device memory at the compiled program's peak, by source line.

Every size is in bytes, per device (an SPMD program runs the same buffer assignment on every device of
its mesh). The figures come from XLA's own buffer assignment and live ranges for the optimised module
(``jaxcompat/xla_dump.py``), reconciled against ``compiled.memory_analysis()``. Records hold no JAX
objects: the JSON document (``kind`` ``jitscope.memory``) round-trips through ``from_jsonable``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jitscope.model.bench import BenchFailure, Environment
from jitscope.model.common import Location

MEMORY_KIND = "jitscope.memory"
MEMORY_SCHEMA_VERSION = "1.0"

#: Kinds of buffer: an argument's, the output's, a temporary, a constant baked into the program.
ARGUMENT, OUTPUT, TEMPORARY, CONSTANT = "argument", "output", "temporary", "constant"


@dataclass(frozen=True, slots=True)
class BufferRecord:
    """One buffer live at the peak: a value XLA keeps in device memory at that point of the program."""

    instruction: str  # the HLO instruction that produced it (fusion.12, while.5 for a loop's carry)
    shape: str  # "f32[1024,256]"
    bytes: int
    kind: str  # ARGUMENT, OUTPUT, TEMPORARY, CONSTANT
    location: Location | None  # the line of the inspected function it is listed at; None: no source line
    helper: Location | None = None  # the line inside a helper called from ``location``, where it was made
    in_function: bool = True  # False: a line outside the inspected function (a caller, a library)
    argument: str = ""  # an argument's name (params['w']) for ARGUMENT buffers
    primitive: str = ""  # the jaxpr primitive that made it (tanh, dot_general), from XLA's op_name
    residual: bool = False  # made by the forward pass and read by the backward pass
    donated: bool = False  # an argument whose buffer is reused for an output


@dataclass(frozen=True, slots=True)
class NestedMemory:
    """A helper's line, reached from a listed line, and the bytes live at the peak that it made."""

    location: Location
    bytes: int


@dataclass(frozen=True, slots=True)
class LineMemory:
    """Bytes live at the peak that one source line made (``location`` None: arguments or no line)."""

    location: Location
    bytes: int
    share: float  # of the bytes live at the peak
    buffers: int
    residual_bytes: int = 0  # of which saved for the backward pass
    primitives: tuple[str, ...] = ()
    nested: tuple[NestedMemory, ...] = ()
    in_function: bool = True


@dataclass(frozen=True, slots=True)
class Peak:
    """The moment of the program with the most bytes live, and what is live there."""

    bytes: int  # live at the peak: arguments, constants and every value live there (aliases counted once)
    position: int  # in the schedule (0-based) of ``steps`` steps
    steps: int
    instruction: str  # what runs at that point
    location: Location | None  # the user's line that instruction came from
    buffers: tuple[BufferRecord, ...]  # largest first
    on_lines: int  # of ``bytes``, made by source lines (the ``lines`` rows add up to this)
    arguments: int  # argument buffers (live for the whole call)
    constants: int
    no_source: int  # values with no source line (XLA's own copies, loop counters)


@dataclass(frozen=True, slots=True)
class Totals:
    """XLA's totals, from the buffer assignment and from ``compiled.memory_analysis()`` side by side."""

    arguments: int
    outputs: int
    aliased: int  # output bytes that reuse a donated argument's buffer
    temporaries: int
    constants: int
    generated_code: int | None
    reserved: int  # what the executable needs on the device: arguments + outputs - aliased + temporaries
    analysis: dict[str, int | None] = field(default_factory=dict)  # memory_analysis(): same names
    differences: tuple[str, ...] = ()  # where the two disagree, in words
    reconciles: bool = True


@dataclass(frozen=True, slots=True)
class ResidualLine:
    """Activations one line saves for the backward pass, and what ``jax.checkpoint`` there could save."""

    location: Location
    bytes: int  # every residual it made
    at_peak: int  # of those, live at the peak: the estimate of what recomputing them would free there
    buffers: int
    primitives: tuple[str, ...] = ()
    policy: str = ""  # a jax.checkpoint_policies name that would recompute them (nothing_saveable, dots_saveable)
    in_function: bool = True


@dataclass(frozen=True, slots=True)
class DonationCandidate:
    """An argument not donated whose shape and dtype match an output's: donating it saves the output's buffer."""

    argument: str
    parameter: int  # the entry parameter number (flattened arguments)
    shape: str
    bytes: int
    output: str  # the output it matches ("output 0")


@dataclass(frozen=True, slots=True)
class RematTrial:
    """``--try-remat``: the program compiled again with the function under ``jax.checkpoint`` (``policy``)."""

    policy: str
    peak: int
    reserved: int
    error: str = ""  # why it could not be compiled


@dataclass(frozen=True, slots=True)
class MemoryRow:
    target: str
    call: str
    function: Location  # where the function starts (its def line)
    last_line: int
    module: str  # the HLO module's name (jit_f)
    backend: str  # cpu, gpu, tpu
    devices: int  # devices the program runs on (each holds what is shown here)
    totals: Totals
    peak: Peak
    lines: tuple[LineMemory, ...]  # bytes live at the peak by source line, most first
    residuals: tuple[ResidualLine, ...] = ()  # most at the peak first
    donations: tuple[DonationCandidate, ...] = ()
    remat: tuple[RematTrial, ...] = ()
    label: str = ""
    statics: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    compile_seconds: float = 0.0  # the compile with XLA's dump
    analysis_seconds: float = 0.0  # reading the dump and attributing it
    device_kind: str = ""


@dataclass(frozen=True, slots=True)
class MemorySettings:
    fail_over: int | None = None  # --fail-over, bytes
    try_remat: bool = False


@dataclass(frozen=True, slots=True)
class MemoryReport:
    """The versioned JSON document of ``jitscope memory --format json``."""

    rows: tuple[MemoryRow, ...]
    settings: MemorySettings = field(default_factory=MemorySettings)
    environment: Environment = field(default_factory=dict)
    failures: tuple[BenchFailure, ...] = ()
    over: tuple[str, ...] = ()  # rows whose reserved bytes pass --fail-over, in words
    schema_version: str = MEMORY_SCHEMA_VERSION
    kind: str = MEMORY_KIND
