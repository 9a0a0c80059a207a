"""XLA's compile split into phases, its top passes, and the time each fused kernel took to generate (pure).

The events are a capture around one compile (``jaxcompat/compile_profile.py``). The phases are the
children of the compile client's outermost event (``PjRtCpuClient::Compile``) on its thread, named as XLA
names them less the module suffix (``HLO passes through layout assignment``); a phase that covers more than
half of the compile and whose own children (two or more, looking through single wrappers) cover most of
it is opened (``CpuCompiler::RunBackend`` becomes
``ThunkEmitter::EmitEntryComputation`` and ``Codegen``), so the split says where the time went, not just
"the backend". What no child covers is kept as its parent's own time, so the phases add up to the
captured compile exactly. Passes are every event's own time (nested events excluded), summed by name
over every thread. Kernels are the ``FusionCompiler::Compile`` events, named by their ``module`` stat.

On a GPU (read from H100 captures, jax 0.11.2): the root is the PJRT C API client's
``PjRtCApiClient::CompileAndLoad(jit_f)``, around ``PjRtStreamExecutorClient::CompileInternal`` >
``HLO Transforms:jit_f`` and ``CompileToBackendResult`` > ``ScheduleGpuModule`` and ``CompileModuleToLlvmIr``,
whose LLVM (``Compiling IR:...``) and ptxas (``PTX->CUBIN``) run on the compile threads. The autotuner
(``config-assigner``; ``gemm-fusion-autotuner`` and the ``*-algorithm-picker`` passes on older XLA) compiles
candidate kernels on those threads (``CompileToBackendResult``, their ``module`` stat naming the fusion tuned)
and times them on the GPU: a phase of its own wherever it is 2% of the compile or more, summarised in
``XlaPhases.autotuning``. The CUDA activity it causes (copies, allocations, the timed kernels) is not a pass.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from jitscope.jaxcompat.profiler import XEvent
from jitscope.model.compile import CompilePass, CompilePhase
from jitscope.profiling.events import NS, exclusive_times, union_length

#: The outermost event of a compile: the PJRT client's (``PjRtCpuClient::Compile`` on CPU; a GPU or TFRT
#: client's by the same pattern, ``...Client::Compile`` or ``...Client::CompileAndLoad``). Not a compiler's
#: own ``Compile`` events (``FusionCompiler::Compile`` is one kernel, ``JitCompiler::Compile`` is LLVM).
ROOT_EVENT = re.compile(r"^\w*Client::Compile\w*(\([^()]*\))?$")
#: A phase is opened into its children when it is at least this share of the compile and they cover this
#: share of it.
OPEN_SHARE = 0.5
#: Phases shorter than this share of the compile are summed into one "other phases" row.
SMALL_SHARE = 0.02
#: Passes listed.
TOP_PASSES = 8
#: Events that only wrap others (their own time is scheduling, not a pass).
WRAPPERS = ("mlir::detail::OpToOpPassAdaptor",)
KERNEL_EVENT = "FusionCompiler::Compile"
KERNEL_SUFFIX = "_kernel_module"
_MODULE_SUFFIX = re.compile(r"(?: \([^()]*\)|:jit_[\w.-]*)$")
#: XLA's GPU autotuning passes, across XLA versions.
AUTOTUNE_EVENT = re.compile(r"autotun|algorithm-picker|^config-assigner$")
#: A candidate kernel's compile during autotuning, on a compile thread.
CANDIDATE_EVENT = "CompileToBackendResult"
#: Plain words for XLA's GPU phase and pass names (the name stays, in brackets).
GLOSSES = (("CompileModuleToLlvmIr", "LLVM IR, LLVM and ptxas"), ("PTX->CUBIN", "ptxas"),
           ("Compiling IR:", "LLVM"), ("ScheduleGpuModule", "scheduling"),
           ("CompileToBackendResult", "backend: scheduling, LLVM and ptxas"),
           # CPU: the ORC JIT's tasks on XLA's codegen threads, each LLVM compiling a kernel's module to
           # machine code (no event nests inside; the top pass of most CPU compiles)
           ("TaskDispatcher::dispatch", "LLVM to machine code"))
#: A candidate kernel's run while the autotuner times it (host side; its thunks nest inside, named by
#: instruction): not a pass.
_CANDIDATE_RUN = "GpuExecutable::ExecuteThunks"
#: Device kernels the autotuner runs around the candidates (buffer checks, delays), not candidates.
_AUTOTUNER_HELPERS = ("Memcpy", "Memset", "stream_executor::", "void stream_executor::")
#: Host events that are CUDA activity or the profiler's own, not compiler work.
_NOT_PASSES = ("<UNKNOWN>", "BUFFER_FLUSH")


@dataclass(frozen=True, slots=True)
class Autotuning:
    """XLA's GPU autotuning in one compile: its time on the compile's thread, the candidate kernels it compiled
    on the compile threads, and the kernels it timed on the GPU."""

    seconds: float
    candidates: int
    timed_runs: int
    #: Fusion tuned -> its share of ``seconds`` (by the busy time of its candidates' compiles).
    fusions: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class XlaPhases:
    """What a compile capture says, or ``found=False`` when it holds no compile event."""

    found: bool
    phases: tuple[CompilePhase, ...] = ()
    passes: tuple[CompilePass, ...] = ()
    #: Kernel (fusion) name as the capture writes it -> seconds generating it.
    kernels: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0  # the root event's length
    autotuning: Autotuning | None = None
    #: Host threads the compiler's work ran on (the passes' own times are summed over them).
    threads: int = 1


def phase_name(name: str) -> str:
    """``HLO passes after layout assignment (jit_f)`` -> ``HLO passes after layout assignment``;
    ``HLO Transforms:jit_f`` -> ``HLO Transforms``."""
    return _MODULE_SUFFIX.sub("", name)


def shown_name(name: str) -> str:
    """A phase or pass as a person reads it: ``autotuning (config-assigner)``, ``ptxas (PTX->CUBIN)``."""
    if AUTOTUNE_EVENT.search(name):
        return f"autotuning ({name})"
    gloss = next((g for prefix, g in GLOSSES if name.startswith(prefix)), "")
    return f"{gloss} ({name})" if gloss else name


def _holds_autotuning(event: XEvent, line: Sequence[XEvent], total: float) -> bool:
    """Whether an autotuning pass of at least ``SMALL_SHARE`` of the compile runs inside ``event`` (not being it)."""
    if AUTOTUNE_EVENT.search(phase_name(event.name)):
        return False
    return any(AUTOTUNE_EVENT.search(phase_name(e.name)) and e.duration_ns >= SMALL_SHARE * total
               and event.start_ns <= e.start_ns and e.end_ns <= event.end_ns for e in line)


def _children(parent: XEvent, events: Sequence[XEvent]) -> list[XEvent]:
    """The events directly nested in ``parent`` (``events``: its line's, sorted by start)."""
    out: list[XEvent] = []
    end = float("-inf")
    after_parent = False  # of two events with the same span, the later one in ``events`` is the inner one
    for event in events:
        if event is parent:
            after_parent = True
            continue
        if event.start_ns < parent.start_ns or event.end_ns > parent.end_ns:
            continue
        if not after_parent and (event.start_ns, event.end_ns) == (parent.start_ns, parent.end_ns):
            continue  # the same span, listed first: it encloses the parent, it is not its child
        if event.start_ns >= end:  # not inside the last direct child
            out.append(event)
            end = event.end_ns
    return out


def _through(event: XEvent, line: Sequence[XEvent]) -> XEvent:
    """``event``, or the event it wraps: down through single children that cover most of their parent
    (``CpuCompiler::RunBackend`` > ``CpuCompiler::CompileCpuExecutable``)."""
    while True:
        kids = _children(event, line)
        if len(kids) != 1 or kids[0].duration_ns < OPEN_SHARE * event.duration_ns:
            return event
        event = kids[0]


def _split(parent: XEvent, line: Sequence[XEvent], total: float, out: list[CompilePhase]) -> None:
    children = _children(parent, line)
    covered = sum(c.duration_ns for c in children)
    for child in children:
        inner = _through(child, line)
        grandchildren = _children(inner, line)
        opened = len(grandchildren) > 1 and (
            (child.duration_ns >= OPEN_SHARE * total
             and sum(g.duration_ns for g in grandchildren) >= OPEN_SHARE * inner.duration_ns)
            or _holds_autotuning(inner, line, total))
        if opened:
            _split(inner, line, total, out)
            if child.duration_ns > inner.duration_ns:  # what the wrappers above it did themselves
                out.append(CompilePhase(f"{phase_name(child.name)} (own time)",
                                        (child.duration_ns - inner.duration_ns) * NS))
        else:  # a single child only renames it: the outer name stays (``Codegen``, not ``JitCompiler::Compile``)
            out.append(CompilePhase(phase_name(child.name), child.duration_ns * NS))
    own = parent.duration_ns - covered
    if own > 0:
        out.append(CompilePhase(f"{phase_name(parent.name)} (own time)", own * NS))


def _merged(phases: list[CompilePhase], total: float) -> tuple[CompilePhase, ...]:
    """Phases of one name summed, in first-run order; the small ones summed into one row."""
    by_name: dict[str, float] = {}
    for phase in phases:
        by_name[phase.name] = by_name.get(phase.name, 0.0) + phase.seconds
    big = [CompilePhase(shown_name(n), s) for n, s in by_name.items() if s >= SMALL_SHARE * total * NS]
    small = [s for s in by_name.values() if s < SMALL_SHARE * total * NS]
    if small:
        big.append(CompilePhase(f"{len(small)} shorter phases", sum(small)))
    return tuple(big)


def _passes(during: Sequence[XEvent], root: XEvent) -> tuple[CompilePass, ...]:
    """Own time by name of the compiler's events during the compile (``during``), on every thread."""
    seconds: dict[str, float] = defaultdict(float)
    runs: dict[str, int] = defaultdict(int)
    for event, own in exclusive_times(during):
        if event is root or event.name in WRAPPERS:
            continue
        name = phase_name(event.name)
        seconds[name] += own * NS
        runs[name] += 1
    ranked = sorted(seconds, key=lambda n: -seconds[n])[:TOP_PASSES]
    return tuple(CompilePass(shown_name(n), seconds[n], runs[n]) for n in ranked)


def _compiler_work(events: Sequence[XEvent]) -> list[XEvent]:
    """The events that are the compiler's: not the GPU's own, nor the CUDA activity on host threads (copies,
    allocations, launches), nor the autotuner's runs of candidate kernels with everything inside them."""
    runs: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for event in events:
        if _CANDIDATE_RUN in event.name:
            runs[(event.plane, event.line)].append((event.start_ns, event.end_ns))
    starts = {key: sorted(spans) for key, spans in runs.items()}  # one thread's runs follow each other

    def in_run(event: XEvent) -> bool:
        spans = starts.get((event.plane, event.line))
        if not spans:
            return False
        i = bisect.bisect_right(spans, (event.start_ns, float("inf"))) - 1
        return i >= 0 and event.end_ns <= spans[i][1]

    return [e for e in events if not e.on_device and "correlation_id" not in e.stats and e.name not in _NOT_PASSES
            and not in_run(e)]


def _module_of(event: XEvent, line: Sequence[XEvent], starts: Sequence[float]) -> str:
    """The ``module`` stat of the first event nested in ``event`` that has one (the fusion a candidate is of);
    ``line`` sorted by start, ``starts`` its start times."""
    for other in line[bisect.bisect_left(starts, event.start_ns):]:
        if other.start_ns > event.end_ns:
            break
        if other.end_ns <= event.end_ns and other.stats.get("module"):
            return other.stats["module"]
    return ""


def _autotuning(events: Sequence[XEvent], root: XEvent, line: Sequence[XEvent]) -> Autotuning | None:
    """The autotuner's passes on the compile's thread, and what ran inside them elsewhere."""
    windows = [(e.start_ns, e.end_ns) for e in line if AUTOTUNE_EVENT.search(phase_name(e.name))
               and root.start_ns <= e.start_ns and e.end_ns <= root.end_ns]
    if not windows:
        return None
    seconds = union_length(windows) * NS

    def inside(event: XEvent) -> bool:
        return any(start <= event.start_ns < end for start, end in windows)

    lines: dict[tuple[str, str], list[XEvent]] = defaultdict(list)
    for event in events:
        if (event.plane, event.line) != (root.plane, root.line) and inside(event):
            lines[(event.plane, event.line)].append(event)
    busy: dict[str, float] = defaultdict(float)
    candidates = timed = 0
    for other in lines.values():
        other.sort(key=lambda e: (e.start_ns, -e.duration_ns))
        starts = [e.start_ns for e in other]
        for event in other:
            if event.on_device:
                timed += not event.name.startswith(_AUTOTUNER_HELPERS)
            elif event.name == CANDIDATE_EVENT:
                candidates += 1
                busy[_module_of(event, other, starts)] += event.duration_ns
    total = sum(busy.values())
    fusions = {name: seconds * ns / total for name, ns in busy.items() if name} if total else {}
    return Autotuning(seconds, candidates, timed, fusions)


def xla_phases(events: Sequence[XEvent]) -> XlaPhases:
    """The phases, passes and kernel times of the one compile in ``events``."""
    roots = [e for e in events if ROOT_EVENT.match(e.name)]
    if not roots:
        return XlaPhases(found=False)
    root = max(roots, key=lambda e: e.duration_ns)
    line = sorted((e for e in events if (e.plane, e.line) == (root.plane, root.line)),
                  key=lambda e: (e.start_ns, -e.duration_ns))
    out: list[CompilePhase] = []
    _split(root, line, root.duration_ns, out)
    kernels: dict[str, float] = defaultdict(float)
    for event in events:
        module = event.stats.get("module", "")
        if event.name == KERNEL_EVENT and module:
            kernels[module.removesuffix(KERNEL_SUFFIX)] += event.duration_ns * NS
    during = [e for e in _compiler_work(events) if root.start_ns <= e.start_ns < root.end_ns]
    threads = len({(e.plane, e.line) for e in during})
    return XlaPhases(True, _merged(out, root.duration_ns), _passes(during, root), dict(kernels),
                     root.duration_ns * NS, _autotuning(events, root, line), max(threads, 1))
