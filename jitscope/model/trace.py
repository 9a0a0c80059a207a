"""Records produced by ``jitscope trace``: what the function saw, its effects, and each stage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from jitscope.model.common import OMITTED_WHEN_DEFAULT, Location
from jitscope.model.compile import CompileTimeRecord
from jitscope.model.effects import EffectsRecord
from jitscope.model.jaxpr import JaxprRecord, JaxprSummary
from jitscope.model.run import CompiledProgram, ProcessInfo
from jitscope.model.sharding import ShardingRecord

STAGES: tuple[str, ...] = ("jaxpr", "stablehlo", "hlo", "cost", "memory")

#: Version of the ``jitscope.trace`` document. 1.1 added ``call_index`` and ``cache_hit_of`` to each
#: trace; 1.0 documents still load (both default). 1.2: ``environment.device_count`` is an int and
#: ``environment.x64`` a bool (both were strings). 1.3: ``sharding`` (``model/sharding.py``) on traces of
#: sharded programs; older documents load with none. 1.4: each equation's ``library`` and ``library_call``
#: frames beside its user ``location``, and each trace's ``source_roots``, ``arguments`` and ``source_lines``
#: (all default when absent). 1.5: each trace's ``library_calls`` (the optimised HLO's custom calls, named, with
#: the user's lines), left out while empty. 1.6: each trace's ``compile_time`` (``model/compile.py``: the compile by
#: line of the user's code and, with ``--compile-profile``, by XLA phase), left out while None. ``process`` and each trace's ``program`` (``trace --processes`` only) are left
#: out while default, so a single-process document is unchanged. The lint document keeps SCHEMA_VERSION; bench
#: has its own.
TRACE_SCHEMA_VERSION = "1.6"


@dataclass(frozen=True, slots=True)
class SeenArg:
    """One argument leaf as the function body received it: a tracer or a static value."""

    path: str  # "x", "params['w']"
    kind: Literal["traced", "static"]
    type_name: str  # DynamicJaxprTracer, float, ...
    shape: tuple[int, ...] = ()
    dtype: str = ""
    weak_type: bool = False
    value_repr: str = ""

    @property
    def aval(self) -> str:
        text = f"{self.dtype}[{','.join(map(str, self.shape))}]"
        return f"~{text}" if self.weak_type else text


@dataclass(frozen=True, slots=True)
class ArgumentSummary:
    """One argument of the call as a whole: ``GPT(110,529 params, 432 KiB)`` instead of its 40 leaves."""

    name: str  # "model", "batch", "args[2]"
    type_name: str  # GPT, Optimizer, ShapeDtypeStruct, dict, ...
    #: What the call label shows for it (``load.specs.format_value``): a spec, a literal or an object summary.
    text: str
    traced: int = 0  # array leaves the body received as tracers
    static: int = 0  # other leaves (None, Python values, functions)
    #: Elements and bytes of its traced leaves.
    elements: int = 0
    nbytes: int = 0


@dataclass(frozen=True, slots=True)
class SourceLineRecord:
    """What one line of the user's code became: equations (library internals included) and compiled cost."""

    #: The line; None for the equations and ops that no line of the user's code made.
    location: Location | None
    #: Equations it produced, nested ones included, and how many of those came from library code it called.
    eqns: int
    library_eqns: int = 0
    #: (primitive, count), most frequent first.
    primitives: tuple[tuple[str, int], ...] = ()
    #: Library functions the line called (``flax MultiHeadAttention.__call__``), in order of first use.
    calls: tuple[str, ...] = ()
    #: XLA's FLOPs and bytes accessed for the module, split over lines by the HLO instructions' source stacks
    #: (each instruction's share estimated as ``jitscope profile`` does); None when not compiled.
    flops: float | None = None
    bytes: float | None = None


@dataclass(frozen=True, slots=True)
class CostRecord:
    """XLA's cost analysis of the compiled program; None where the backend gives no figure."""

    flops: float | None = None
    transcendentals: float | None = None
    bytes_accessed: float | None = None

    @property
    def arithmetic_intensity(self) -> float | None:
        if self.flops is None or not self.bytes_accessed:
            return None
        return self.flops / self.bytes_accessed


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """XLA's memory analysis of the compiled program, in bytes."""

    argument_bytes: int | None = None
    output_bytes: int | None = None
    alias_bytes: int | None = None
    temp_bytes: int | None = None
    generated_code_bytes: int | None = None

    @property
    def peak_bytes(self) -> int | None:
        """Arguments + outputs + temporaries - aliased buffers: what the program needs live at once."""
        parts = (self.argument_bytes, self.output_bytes, self.temp_bytes)
        if any(p is None for p in parts):
            return None
        return sum(p for p in parts if p is not None) - (self.alias_bytes or 0)


@dataclass(frozen=True, slots=True)
class StagesRecord:
    """Lowered and compiled forms; a field is None when that stage was not asked for."""

    stablehlo: str | None = None
    hlo: str | None = None
    cost: CostRecord | None = None
    memory: MemoryRecord | None = None
    lower_seconds: float | None = None
    compile_seconds: float | None = None
    backend: str = ""


@dataclass(frozen=True, slots=True)
class LibraryCall:
    """One custom-call target of the optimised HLO (cuBLAS, cuDNN, LAPACK, a callback ...): how many
    instructions call it, and from which of the user's lines (schema 1.5)."""

    target: str  # "__cublas$gemm"
    what: str  # "cuBLAS matrix multiply"
    count: int
    lines: tuple[Location, ...] = ()  # in order of first appearance; () when none is known


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A trace-time failure explained: where in the user's code, what went wrong, how to fix it."""

    kind: str  # bool_conversion, concretization, unhashable_static, shape, user_error, ...
    message: str
    location: Location | None
    fix: str
    source_line: str = ""
    traceback: str = ""  # the user's frames only


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """Everything ``jitscope trace`` learned about one target called with one ArgSet."""

    target: str
    how: str
    call: str  # the argument spec, e.g. "f32[8,128], threshold=0.0"
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    donate_argnums: tuple[int, ...] = ()
    seen: tuple[SeenArg, ...] = ()
    effects: EffectsRecord | None = None
    body_runs: int = 0
    trace_seconds: float = 0.0
    printed: str = ""  # what the function printed while tracing
    jaxpr: JaxprRecord | None = None
    summary: JaxprSummary | None = None
    stages: StagesRecord | None = None
    diagnostic: Diagnostic | None = None
    warnings: tuple[str, ...] = ()
    #: 1-based position of this call in its target's call sequence (schema 1.1).
    call_index: int = 1
    #: The earlier call of the sequence with the same cache key: JAX would reuse its compiled
    #: program instead of tracing this call; None when this call compiles (schema 1.1).
    cache_hit_of: int | None = None
    #: Layouts, collectives and traffic when the program runs on several devices (schema 1.3).
    sharding: ShardingRecord | None = None
    #: The folders whose files count as the user's code for ``location`` (schema 1.4).
    source_roots: tuple[str, ...] = ()
    #: Each argument summarised as a whole (schema 1.4).
    arguments: tuple[ArgumentSummary, ...] = ()
    #: The jaxpr by line of the user's code, most FLOPs first (equations first when not compiled; schema 1.4).
    source_lines: tuple[SourceLineRecord, ...] = ()
    #: ``trace --processes``: the program this process compiled (its fingerprint, as ``jitscope run`` records it,
    #: and its HLO for the first difference); left out otherwise.
    program: CompiledProgram | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    #: The optimised HLO's library calls, most instructions first (schema 1.5); left out while empty.
    library_calls: tuple[LibraryCall, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)
    #: The compile by line of the user's code, and by XLA phase with ``--compile-profile`` (schema 1.6); left
    #: out while None (not compiled).
    compile_time: CompileTimeRecord | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@dataclass(frozen=True, slots=True)
class TraceReport:
    """The versioned JSON document of ``jitscope trace --format json``."""

    traces: tuple[TraceRecord, ...]
    environment: dict[str, str | int | bool] = field(default_factory=dict)  # jaxcompat.stages.environment()
    schema_version: str = TRACE_SCHEMA_VERSION
    kind: str = "jitscope.trace"
    #: Which process of a multi-process program (``trace --processes``) traced this; left out for one process.
    process: ProcessInfo | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
