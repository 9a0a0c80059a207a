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
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from jitscope.jaxcompat.profiler import XEvent
from jitscope.model.compile import CompilePass, CompilePhase
from jitscope.profiling.events import NS, exclusive_times

#: The outermost event of a compile: the PJRT client's (``PjRtCpuClient::Compile`` on CPU; a GPU or TFRT
#: client's by the same pattern, ``...Client::Compile`` or ``...Client::CompileAndLoad``). Not a compiler's
#: own ``Compile`` events (``FusionCompiler::Compile`` is one kernel, ``JitCompiler::Compile`` is LLVM).
ROOT_EVENT = re.compile(r"^\w*Client::Compile\w*$")
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
_MODULE_SUFFIX = re.compile(r" \([^()]*\)$")


@dataclass(frozen=True, slots=True)
class XlaPhases:
    """What a compile capture says, or ``found=False`` when it holds no compile event."""

    found: bool
    phases: tuple[CompilePhase, ...] = ()
    passes: tuple[CompilePass, ...] = ()
    #: Kernel (fusion) name as the capture writes it -> seconds generating it.
    kernels: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0  # the root event's length


def phase_name(name: str) -> str:
    """``HLO passes after layout assignment (jit_f)`` -> ``HLO passes after layout assignment``."""
    return _MODULE_SUFFIX.sub("", name)


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
        opened = (child.duration_ns >= OPEN_SHARE * total and len(grandchildren) > 1
                  and sum(g.duration_ns for g in grandchildren) >= OPEN_SHARE * inner.duration_ns)
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
    big = [CompilePhase(n, s) for n, s in by_name.items() if s >= SMALL_SHARE * total * NS]
    small = [s for s in by_name.values() if s < SMALL_SHARE * total * NS]
    if small:
        big.append(CompilePhase(f"{len(small)} shorter phases", sum(small)))
    return tuple(big)


def _passes(events: Sequence[XEvent], root: XEvent) -> tuple[CompilePass, ...]:
    seconds: dict[str, float] = defaultdict(float)
    runs: dict[str, int] = defaultdict(int)
    for event, own in exclusive_times(events):
        if event is root or event.name in WRAPPERS:
            continue
        name = phase_name(event.name)
        seconds[name] += own * NS
        runs[name] += 1
    ranked = sorted(seconds, key=lambda n: -seconds[n])[:TOP_PASSES]
    return tuple(CompilePass(n, seconds[n], runs[n]) for n in ranked)


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
    return XlaPhases(True, _merged(out, root.duration_ns), _passes(events, root), dict(kernels),
                     root.duration_ns * NS)
