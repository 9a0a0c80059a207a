"""Device time per HLO instruction from a capture's events (pure: no jax).

The events of one compiled module (``hlo_module`` stat) are taken from the accelerator's
planes when there are any (GPU kernels, TPU ops), else from the host (the XLA CPU client's
thunks). Per event the *exclusive* time is kept: a thunk that contains others on the same
thread (a while loop around its body's thunks) keeps only what its children do not cover.
Executions are told apart by the ``run_id`` stat (CPU, TPU); without it (GPU) the events are
cut at the ``calls - 1`` widest gaps between them (where the device waited for the host). Busy time is the union of the events' intervals;
idle time is what lies between them inside one execution's span.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from jitscope.jaxcompat.profiler import XEvent
from jitscope.model.sharding import COLLECTIVE_KINDS

NS = 1e-9

#: HLO opcodes (and name prefixes) of collective communication: the collectives the sharding analysis
#: lists, plus point-to-point transfers and ragged all-to-all, whose time is communication too.
COLLECTIVE_OPCODES = (*COLLECTIVE_KINDS, "send", "recv", "ragged-all-to-all")
COPY_OPCODES = ("copy", "copy-start", "copy-done")
CONTROL_OPCODES = ("while", "conditional", "call")


def classify_op(opcode: str, name: str = "") -> str:
    """``compute``, ``collective``, ``copy`` or ``control`` for an HLO opcode (or, without one, a name).

    Kept small and explicit on purpose: splitting compute from communication time (a sharded
    program) reads this one function. ``-start``/``-done`` halves of async ops belong to their op.
    """
    base = opcode.removesuffix("-start").removesuffix("-done") if opcode else ""
    if base in COLLECTIVE_OPCODES or (not opcode and any(c.replace("-", "_") in name.replace("-", "_")
                                                        for c in COLLECTIVE_OPCODES)):
        return "collective"
    if opcode in COPY_OPCODES or (not opcode and "memcpy" in name.lower()):
        return "copy"
    if opcode in CONTROL_OPCODES:
        return "control"
    return "compute"


@dataclass(frozen=True, slots=True)
class OpTime:
    """One HLO instruction's time over every profiled call (exclusive of nested instructions)."""

    name: str
    seconds: float
    events: int


@dataclass(frozen=True, slots=True)
class DeviceTimes:
    """What the module's events say, summed over ``executions`` executions."""

    ops: tuple[OpTime, ...]
    busy: float  # union of every event's interval, summed over executions
    span: float  # first event's start to last event's end, summed over executions
    copies: float  # device copies that carry no hlo_op (GPU memcpy), seconds
    executions: int
    op_seconds: float  # sum of the exclusive times (> busy when thunks ran concurrently)
    on_device: bool  # the events came from an accelerator plane


def _module_name(stat: str) -> str:
    """``jit_f`` of an ``hlo_module`` stat, also when a profiler writes it with its program id: ``jit_f(12)``."""
    return stat.split("(", 1)[0] if stat.endswith(")") else stat


def module_events(events: Sequence[XEvent], module: str) -> tuple[list[XEvent], list[XEvent], bool]:
    """(events of ``module``, device copies, whether they are device events)."""
    mine = [e for e in events if "hlo_op" in e.stats and _module_name(e.stats.get("hlo_module", "")) == module]
    on_device = any(e.on_device for e in mine)
    if on_device:
        mine = [e for e in mine if e.on_device]
    copies = [e for e in events if e.on_device and "hlo_op" not in e.stats] if on_device else []
    return mine, copies, on_device


def exclusive_times(events: Sequence[XEvent]) -> list[tuple[XEvent, float]]:
    """Each event with its duration minus that of the events nested in it on the same thread."""
    by_line: dict[tuple[str, str], list[XEvent]] = defaultdict(list)
    for event in events:
        by_line[(event.plane, event.line)].append(event)
    out: list[tuple[XEvent, float]] = []
    for line_events in by_line.values():
        ordered = sorted(line_events, key=lambda e: (e.start_ns, -e.duration_ns))
        own = [e.duration_ns for e in ordered]
        stack: list[int] = []
        for i, event in enumerate(ordered):
            while stack and ordered[stack[-1]].end_ns <= event.start_ns:
                stack.pop()
            if stack and event.end_ns <= ordered[stack[-1]].end_ns:
                own[stack[-1]] -= event.duration_ns
            stack.append(i)
        out.extend((e, max(t, 0.0)) for e, t in zip(ordered, own, strict=True))
    return out


def union_length(intervals: Sequence[tuple[float, float]]) -> float:
    """Total length covered by ``intervals`` (start, end)."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def executions(events: Sequence[XEvent], calls: int) -> list[list[XEvent]]:
    runs: dict[str, list[XEvent]] = defaultdict(list)
    if all("run_id" in e.stats for e in events):
        for event in events:
            runs[event.stats["run_id"]].append(event)
        return list(runs.values())
    # No run ids (GPU kernels): a call's kernels are queued back to back, while between two calls the
    # device waits for the host to block on the result and dispatch again, so the calls - 1 widest
    # gaps between one event's end and the next one's start are where one call ends.
    ordered = sorted(events, key=lambda e: e.start_ns)
    if calls <= 1 or len(ordered) < calls:
        return [ordered] if ordered else []
    ends = [ordered[0].end_ns]
    for event in ordered[1:]:
        ends.append(max(ends[-1], event.end_ns))
    gaps = sorted(range(1, len(ordered)), key=lambda i: ordered[i].start_ns - ends[i - 1], reverse=True)
    cuts = sorted(gaps[: calls - 1])
    return [ordered[a:b] for a, b in zip([0, *cuts], [*cuts, len(ordered)], strict=True)]


def device_times(events: Sequence[XEvent], module: str, calls: int) -> DeviceTimes:
    """Per-instruction exclusive time, busy, span and copies of ``module`` over the captured calls."""
    mine, copies, on_device = module_events(events, module)
    per_op: dict[str, list[float]] = defaultdict(list)
    for event, own in exclusive_times(mine):
        per_op[event.stats["hlo_op"]].append(own * NS)
    runs = executions(mine, calls)
    busy = sum(union_length([(e.start_ns, e.end_ns) for e in run]) for run in runs) * NS
    span = sum(max(e.end_ns for e in run) - min(e.start_ns for e in run) for run in runs if run) * NS
    ops = tuple(sorted((OpTime(name, sum(times), len(times)) for name, times in per_op.items()),
                       key=lambda o: -o.seconds))
    return DeviceTimes(ops=ops, busy=busy, span=span, copies=sum(e.duration_ns for e in copies) * NS,
                       executions=len(runs), op_seconds=sum(o.seconds for o in ops), on_device=on_device)
