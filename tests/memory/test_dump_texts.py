"""The dump texts' grammar on captured text: 0.4.38's (live ranges inside the buffer assignment, no {} index)."""

from __future__ import annotations

from jitscope.buffers.liveness import peak_live
from jitscope.jaxcompat.buffer_assignment import (
    OUTPUT,
    PARAMETER,
    TEMPORARY,
    THREAD_LOCAL,
    parse_allocations,
    parse_live_ranges,
)

OLD = """BufferAssignment:
allocation 0: size 1048576, parameter 0, shape |f32[512,512]| at ShapeIndex {}, output shape is |f32[512,512]|, maybe-live-out:
 value: <21 fusion @0> (size=1048576,offset=0): f32[512,512]{1,0}
 value: <30 c.1 @0> (size=1048576,offset=0): f32[512,512]{1,0}
 value: <36 arg_tuple.3{1} (phi) @0> (size=1048576,offset=0): f32[512,512]{1,0}
allocation 1: size 4, thread-local:
 value: <2 add.11 @0> (size=4,offset=0): f32[]
allocation 2: size 64, output shape is |f32[16]|, maybe-live-out:
 value: <9 out @0> (size=64,offset=0): f32[16]{0}
allocation 3: size 2048, preallocated-temp:
 value: <26 a @0> (size=1024,offset=0): f32[256]{0}
 value: <27 b @0> (size=1024,offset=1024): f32[256]{0}
 value: <28 c @0> (size=1024,offset=0): f32[256]{0}

Total bytes used: 1050692 (1.00MiB)

HloLiveRange (max 5):
  InstructionSequence:
    0:c.1
    1:a
    2:b
    3:c
    4:out
  BufferLiveRange:
    c.1:0-5
    fusion:3-5
    arg_tuple.3{1}:1-2
    a:1-2
    b:2-4
    c:3-4
    out:4-5
  Live ranges at 3 (peak):
    c.1: 1048576 bytes
"""


def test_allocations_and_values():
    allocations = parse_allocations(OLD)
    assert [a.kind for a in allocations] == [PARAMETER, THREAD_LOCAL, OUTPUT, TEMPORARY]
    assert allocations[0].parameter == 0 and allocations[0].live_out
    phi = allocations[0].values[2]
    assert (phi.instruction, phi.index, phi.phi) == ("arg_tuple.3", "{1}", True)
    assert allocations[3].values[1].offset == 1024


def test_live_ranges_without_index_are_index_braces():
    ranges = parse_live_ranges(OLD)
    assert ranges.sequence == ("c.1", "a", "b", "c", "out")
    assert ranges.ranges[("c.1", "{}")] == (0, 5) and ranges.ranges[("arg_tuple.3", "{1}")] == (1, 2)


def test_the_peak_counts_a_shared_slot_once():
    live = peak_live(parse_allocations(OLD), parse_live_ranges(OLD))
    # at step 4: the argument (1 MiB, held throughout; its loop phi is the same buffer), the output and two
    # 1 KiB temporaries; a and c share one slot, which holds c there
    assert live.bytes == 1048576 + 64 + 2048
    assert live.position == 4
    held = {value.instruction for _, value in live.live}
    assert held == {"c.1", "out", "b", "c"}
