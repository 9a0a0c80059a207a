"""Kernels that ran inside a CUDA graph, given back to the HLO instructions they came from (pure: no jax).

XLA's GPU compiler gathers runs of thunks into command buffers, which run as CUDA graphs. The profiler then
reports each kernel of the graph with the graph's own ``hlo_op`` (``command_buffer_1``), so every kernel of a
training step would be one op without a source line. The kernels keep their names, though, and XLA names a
kernel after the fusion it runs (``loop_add_fusion.3`` -> ``loop_add_fusion_3``). A library's kernels
(cuBLAS ``sm90_xmma_gemm_...``, cuDNN) carry the library's names instead: they are given, in order, to the
next library call (``custom-call``) of the schedule after the last kernel placed, as the graph runs its nodes
in the schedule's order. A memset or memcpy node goes with the kernel that follows it (it clears or fills
that kernel's buffer).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from jitscope.jaxcompat.profiler import XEvent
from jitscope.profiling.events import executions
from jitscope.profiling.hlo import HloModule, Instruction

#: A library's helper kernel that finishes the previous library kernel's work (cuBLAS split-K reduction).
_HELPER_KERNELS = ("splitKreduce", "reduce_kernel")
_TRANSFERS = ("Memset", "Memcpy", "memset", "memcpy")


@dataclass(frozen=True, slots=True)
class Resolved:
    """The events with graph kernels given their instructions, and how many were (or were not)."""

    events: list[XEvent]
    by_name: int = 0  # kernels named after their fusion
    by_order: int = 0  # library kernels placed by the schedule's order
    unresolved: int = 0  # kernels left on the graph's own op (no source line)
    graphs: tuple[str, ...] = ()  # the graphs' own ops (``command_buffer_1``)


def kernel_name(instruction: str) -> str:
    """The name XLA gives the kernel of ``instruction``: ``loop_add_fusion.3`` -> ``loop_add_fusion_3``."""
    return instruction.replace(".", "_").replace("-", "_")


def resolve_graph_kernels(events: Sequence[XEvent], module: HloModule, calls: int) -> Resolved:
    """``events`` with each kernel that ran inside a command buffer of ``module`` given the instruction it
    ran (its ``hlo_op`` stat), where its name or the schedule tells; every other event as it was.

    Each of the ``calls`` executions is walked in time order against the schedule: a kernel named after a
    fusion still ahead in the schedule is that fusion; one named after a fusion already passed is a kernel
    XLA reused for an identical later fusion (it compiles one kernel for all of them), so it is the next
    fusion of the schedule; a library kernel is the next library call.
    """
    where: dict[str, tuple[str, int]] = {}  # instruction -> (computation, position in the schedule)
    for computation in module.computations.values():
        for i, instruction in enumerate(computation.instructions):
            where[instruction.name] = (computation.name, i)
    graph_events = [e for e in events if _in_graph(e, module.name, where)]
    if not graph_events:
        return Resolved(list(events))
    inner = {kernel_name(name): name for name in where}
    named = {id(e): inner.get(e.name) or (e.name if e.name in where else None) for e in graph_events}
    # The computation most named kernels ran in: the command buffer's body, whose schedule is walked.
    (home, _), = Counter(where[n][0] for n in named.values() if n is not None).most_common(1) or [("", 0)]
    schedule = module.computations[home].instructions if home else ()
    placed: dict[int, str] = {}
    by_name = by_order = 0
    for run in executions(graph_events, calls):
        walk = _Walk(schedule)
        waiting: list[XEvent] = []  # memsets and memcpys, placed with the next kernel
        for event in run:
            if named[id(event)] is None and event.name.startswith(_TRANSFERS):
                waiting.append(event)
                continue
            name, how = walk.place(event.name, named[id(event)], where, home)
            if name is None:
                continue
            by_name += how == "name"
            by_order += how == "order"
            placed[id(event)] = name
            for transfer in waiting:
                placed[id(transfer)] = name
            waiting.clear()
    out = [dataclasses.replace(e, stats={**e.stats, "hlo_op": placed[id(e)]}) if id(e) in placed else e
           for e in events]
    unresolved = sum(1 for e in graph_events if id(e) not in placed and not e.name.startswith(_TRANSFERS))
    return Resolved(out, by_name, by_order, unresolved, tuple(sorted({e.stats["hlo_op"] for e in graph_events})))


class _Walk:
    """A position in the command buffer's schedule, moved on by each kernel placed."""

    def __init__(self, schedule: Sequence[Instruction]) -> None:
        self.schedule = schedule
        self.next = 0  # the first instruction not yet run
        self.library: str | None = None  # the library call the last kernel was given

    def place(self, kernel: str, name: str | None, where: dict[str, tuple[str, int]],
              home: str) -> tuple[str | None, str]:
        if name is not None and where[name][0] != home:
            return name, "name"  # a kernel outside the walked body: its name is all there is
        if name is not None and where[name][1] >= self.next - 1:
            self.next, self.library = where[name][1] + 1, None
            return name, "name"
        if name is None and self.library is not None and any(h in kernel for h in _HELPER_KERNELS):
            return self.library, "order"
        wanted = "fusion" if name is not None else "custom-call"  # a reused fusion kernel, or a library's
        for i in range(self.next, len(self.schedule)):
            if self.schedule[i].opcode == wanted:
                self.next = i + 1
                self.library = self.schedule[i].name if wanted == "custom-call" else None
                return self.schedule[i].name, "order"
        return None, ""


def _in_graph(event: XEvent, module: str, where: dict[str, tuple[str, int]]) -> bool:
    """A device event of ``module`` whose op is a command buffer rather than the instruction it ran."""
    if not event.on_device or "hlo_op" not in event.stats:
        return False
    if event.stats.get("hlo_module", "").split("(", 1)[0] != module:
        return False
    op = event.stats["hlo_op"]
    return "cuda_graph_id" in event.stats or op.startswith("command_buffer") or op not in where
