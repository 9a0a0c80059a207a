"""Records of ``jitscope run``: every trace and compile of a whole program, and why it happened.

They hold no JAX objects (functions are named by their definition site, arguments by
their abstract values), so a run log goes to JSON and back unchanged. The causes are
``keys.KeyDiff`` values, the same components ``lint --trace`` reports for JS306.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jitscope.model.common import OMITTED_WHEN_DEFAULT, Location
from jitscope.model.effects import EffectRecord
from jitscope.model.keys import KeyDiff

#: Version of the ``jitscope.run`` JSON document; bump the major number on a breaking change.
#: 1.1: CompileEvent.via; 1.2: CompileEvent.jax_name; 1.3: a run in one process of a multi-process program
#: (``jax.distributed``): ``RunRecord.process`` and ``partial``, ``CompileEvent.process`` and ``program``,
#: left out of a single-process document; 1.4: ``CompileEvent.visit``, ``RunRecord.syncs``.
RUN_SCHEMA_VERSION = "1.4"
#: The first version with the multi-process fields (``jitscope merge`` reads that and later).
RUN_SCHEMA_VERSION_PROCESSES = "1.3"


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """Which process of a multi-process program a run was, and where it ran."""

    index: int  # jax.process_index()
    count: int  # jax.process_count()
    host: str
    #: This process's own devices, as JAX names them ("cpu:0", "cuda:3"); () when JAX never started a backend.
    local_devices: tuple[str, ...] = ()
    pid: int = 0
    #: Seconds since the epoch when jitscope started the program: places every event on one clock
    #: across processes (hosts' clocks agree only as well as NTP keeps them).
    started_unix: float = 0.0
    coordinator: str = ""  # jax.distributed's coordinator address
    #: Where the index came from: "jax.distributed", or a launcher's variable ("SLURM_PROCID") when the
    #: program ended before it initialised jax.distributed.
    source: str = "jax.distributed"


@dataclass(frozen=True, slots=True)
class CompiledProgram:
    """What one compile produced, to tell whether every process compiled the same program."""

    #: sha256 (16 hex digits) of the optimised HLO with what legitimately differs between processes removed
    #: (metadata: source paths and op names; the Python stack tables). Equal on every process of an SPMD step.
    fingerprint: str
    #: The executable's own fingerprint where the backend gives one (it covers metadata too).
    jax_fingerprint: str = ""
    #: The optimised HLO as compiled (metadata kept, to name source lines), zlib-compressed and base64,
    #: at most ``hlo_limit`` characters of it; "" when not kept.
    hlo_zlib: str = ""
    hlo_chars: int = 0  # length of the whole text
    truncated: bool = False  # hlo_zlib holds only its start

#: ``CompileEvent.kind``: the user's jitted function, a function JAX built itself (eager
#: op-by-op execution), or a compile jitscope saw only as a JAX event.
USER, JAX_INTERNAL, UNATTRIBUTED = "jit", "jax-internal", "unattributed"
#: A library's own jit of its own function, called from the library (flax's ``eval_shape`` checks).
LIBRARY = "library"


@dataclass(frozen=True, slots=True)
class CompileEvent:
    """One trip through tracing and/or compilation of one jitted function."""

    index: int  # 1-based, in program order
    function: str  # qualified name, e.g. "train_step" or "Model.__call__"
    defined_at: Location | None
    call_site: Location | None  # the first frame in the user's code
    #: This function's n-th trace/compile (1 = the first). Not its n-th call: a cached call runs in
    #: JAX's C++ dispatch and never reaches Python, and counting calls would need a wrapper there.
    number: int
    kind: str = USER
    signature: str = ""  # the arguments as JAX saw them, e.g. "x: f32[32,784], lr: ~f32[], training=True"
    at_s: float = 0.0  # seconds since the program started, when the event finished
    traced: bool = False
    compiled: bool = False
    trace_s: float = 0.0
    lower_s: float = 0.0
    compile_s: float = 0.0
    #: Numbers of this function's earlier events nearest to this one (several when equally near).
    nearest: tuple[int, ...] = ()
    #: Every component of the cache key that differs from ``nearest[0]``.
    causes: tuple[KeyDiff, ...] = ()
    #: An earlier event of this function with exactly the same key (JAX dropped that cache entry).
    same_key_as: int = 0
    effects: tuple[EffectRecord, ...] = ()
    error: str | None = None  # tracing raised this (the program saw the exception)
    #: The wrapper the user called it through when not plain ``jax.jit``: "jax.pmap", "equinox.filter_jit".
    via: str = ""
    #: The name JAX's own log gives this compile (``jax_log_compiles``: "Finished XLA compilation of
    #: jit(step)" -> "step"; "jvp(step)" for grad of a jitted function), to match the two line by line.
    jax_name: str = ""
    #: The process it happened in (schema 1.3; only in a multi-process program, see ``RunRecord.process``).
    process: int | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    #: The program XLA compiled (schema 1.3; only in a multi-process program).
    program: CompiledProgram | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    #: An operation run outside jit (``kind`` "jax-internal"): which call of the function its ``call_site``
    #: line called this was, 1, 2, ...: the same for every op one call compiled (a model's init), a new
    #: number each time the line called it again (a loop). 0: not an eager op, or a report before schema 1.4.
    visit: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def total_s(self) -> float:
        return self.trace_s + self.lower_s + self.compile_s

    @property
    def is_recompile(self) -> bool:
        return self.number > 1


@dataclass(frozen=True, slots=True)
class FunctionSummary:
    """All events of one function."""

    function: str
    defined_at: Location | None
    kind: str
    events: int
    compiles: int
    trace_s: float
    lower_s: float
    compile_s: float
    #: Distinct causes, e.g. "batch['x']: shape", with how many recompiles each explains.
    causes: tuple[tuple[str, int], ...] = ()

    @property
    def total_s(self) -> float:
        return self.trace_s + self.lower_s + self.compile_s

    @property
    def recompiles(self) -> int:
        """Compiles after the first: ``compiles`` is always the first compile plus these."""
        return max(self.compiles - 1, 0)


#: Copies to the host at one line before they are a loop's per-step sync, not a value read once.
SYNC_REPEATS = 3


@dataclass(frozen=True, slots=True)
class SyncSite:
    """A line of the user's code that copied arrays from the device to the host (``float(loss)``,
    ``np.asarray(x)``, ``print(x)``): each copy waits for the device to finish computing the value."""

    location: Location
    count: int  # copies made at the line
    wait_s: float  # seconds the host waited in them, in all
    #: For each copy after the line's first: the smaller of the host's work since the line's previous copy
    #: and this copy's wait, summed: the device time async dispatch could have run under the host's work.
    overlap_s: float
    #: Where the arrays lived ("cpu", "gpu", "tpu"; "" when not known). On "cpu" the device is the host's
    #: own cores, and little of ``overlap_s`` can really overlap.
    platform: str = ""


@dataclass(frozen=True, slots=True)
class RunRecord:
    """The whole log of one ``jitscope run``."""

    program: str  # "path/to/train.py" or "-m pkg.module"
    argv: tuple[str, ...]
    exit_code: int
    outcome: str  # "exited 0", "raised ValueError", "interrupted (Ctrl-C)"
    wall_s: float
    events: tuple[CompileEvent, ...]
    functions: tuple[FunctionSummary, ...]
    gate_failures: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    jax_version: str | None = None
    kind: str = "jitscope.run"
    schema_version: str = RUN_SCHEMA_VERSION
    #: Which process of a multi-process program this was (schema 1.3); None for a single process.
    process: ProcessInfo | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    #: Written while the program was still running (schema 1.3): the process was killed, or hung, before
    #: jitscope could write the final report; ``outcome`` says when this was written.
    partial: bool = field(default=False, metadata=OMITTED_WHEN_DEFAULT)
    #: Lines of the user's code that copied arrays to the host (schema 1.4; left out when none).
    syncs: tuple[SyncSite, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)

    @property
    def compile_s(self) -> float:
        return sum(f.total_s for f in self.functions)

    @property
    def process_label(self) -> str:
        """`` (process 1 of 4 on node3)`` in a multi-process program, "" for a single process."""
        p = self.process
        return "" if p is None else f" (process {p.index} of {p.count} on {p.host})"
