"""XLA's allocations and live ranges -> the moment with the most bytes live, and what is live there (pure: no jax).

Bytes live at a point of the schedule: every argument's and constant's buffer (they are held for the
whole call), and every output or temporary value live there. Values XLA placed at the same offset of
the same allocation with the same size are one buffer (a loop's carry and the body's parameter and
result, an in-place update): a *slot*, counted once however many of its values are live. XLA's
own "peak" line counts each value, so it counts an aliased buffer several times; this one does not.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from jitscope.jaxcompat.buffer_assignment import (
    CONSTANT,
    PARAMETER,
    THREAD_LOCAL,
    AllocatedValue,
    Allocation,
    LiveRanges,
)


@dataclass(frozen=True, slots=True)
class Slot:
    """One buffer: a place in an allocation, and the values that live in it one after another."""

    allocation: Allocation
    offset: int
    size: int
    values: tuple[AllocatedValue, ...]
    intervals: tuple[tuple[int, int], ...]  # when it holds a live value: merged, inclusive
    always: bool = False  # an argument or constant: held for the whole call

    def live_at(self, position: int) -> bool:
        return self.always or any(start <= position <= end for start, end in self.intervals)


@dataclass(frozen=True, slots=True)
class LiveSet:
    position: int
    steps: int
    bytes: int
    live: tuple[tuple[Slot, AllocatedValue], ...]  # each slot live there, with the value it holds
    slots: tuple[Slot, ...]  # every slot (residuals are looked for among all of them)


def _merge(intervals: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def slots_of(allocations: tuple[Allocation, ...], live: LiveRanges) -> list[Slot]:
    slots: list[Slot] = []
    for allocation in allocations:
        if allocation.kind == THREAD_LOCAL or not allocation.values:
            continue
        if allocation.kind in (PARAMETER, CONSTANT):
            slots.append(Slot(allocation, 0, allocation.size, allocation.values, (), always=True))
            continue
        groups: dict[tuple[int, int], list[AllocatedValue]] = defaultdict(list)
        for value in allocation.values:
            groups[(value.offset, value.size)].append(value)
        for (offset, size), values in groups.items():
            intervals = [live.ranges[v.key] for v in values if v.key in live.ranges]
            if intervals:
                slots.append(Slot(allocation, offset, size, tuple(values), _merge(intervals)))
    return slots


def holder(slot: Slot, position: int, live: LiveRanges) -> AllocatedValue:
    """The value a slot holds at ``position``: the latest computed one live there (a loop's phi only if
    nothing was computed into it yet); an argument's own parameter value."""
    if slot.always:
        plain = [v for v in slot.values if not v.phi]
        return min(plain or list(slot.values), key=lambda v: live.ranges.get(v.key, (0, 0))[0])
    here = [v for v in slot.values if v.key in live.ranges
            and live.ranges[v.key][0] <= position <= live.ranges[v.key][1]]
    computed = [v for v in here if not v.phi]
    if computed:
        return max(computed, key=lambda v: live.ranges[v.key][0])
    return min(here or list(slot.values), key=lambda v: live.ranges.get(v.key, (0, 0))[0])


def peak_live(allocations: tuple[Allocation, ...], live: LiveRanges) -> LiveSet:
    """The first point of the schedule with the most bytes live (a sweep over the slots' intervals)."""
    slots = slots_of(allocations, live)
    ends = [end for slot in slots for _, end in slot.intervals]
    steps = max([len(live.sequence), *(end + 1 for end in ends)]) if ends or live.sequence else 1
    always = sum(slot.size for slot in slots if slot.always)
    change = [0] * (steps + 1)
    for slot in slots:
        for start, end in slot.intervals:
            change[max(start, 0)] += slot.size
            change[min(end, steps - 1) + 1] -= slot.size
    best, position, running = -1, 0, 0
    for t in range(steps):
        running += change[t]
        if running > best:
            best, position = running, t
    here = tuple((slot, holder(slot, position, live)) for slot in slots if slot.live_at(position))
    return LiveSet(position, steps, always + max(best, 0), here, tuple(slots))
