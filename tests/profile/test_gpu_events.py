"""The GPU path without a GPU: a ProfileData-shaped capture of a device plane, read and attributed.

The fake mirrors what ``jax.profiler.ProfileData`` gives (planes -> lines -> events with ``name``,
``start_ns``, ``duration_ns`` and ``stats`` as (name, value) pairs), as a real CPU capture has it, with
the device plane XLA's GPU profiler writes: ``/device:GPU:0``, kernels on ``Stream #N`` lines carrying
``hlo_op``/``hlo_module``/``correlation_id`` (no ``run_id``), memcpy events, and an ``XLA Ops`` line
derived from the kernels that must not be counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from jitscope.jaxcompat import profiler as jp
from jitscope.profiling.attribute import FunctionSpan, attribute
from jitscope.profiling.events import classify_op, device_times, exclusive_times
from jitscope.profiling.hlo import parse_module

HLO = """HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[64,128]{1,0}, f32[128,256]{1,0})->f32[64,256]{1,0}}

FileNames
1 "/proj/model.py"

FunctionNames
1 "f"
2 "helper"

FileLocations
1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=4 end_column=9}
2 {file_name_id=1 function_name_id=1 line=11 end_line=11 column=4 end_column=20}
3 {file_name_id=1 function_name_id=2 line=3 end_line=3 column=11 end_column=22}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}
3 {file_location_id=3 parent_frame_id=1}


%fused_tanh (param_0: f32[64,256]) -> f32[64,256] {
  %param_0 = f32[64,256]{1,0} parameter(0)
  %constant.1 = f32[] constant(2)
  %broadcast.1 = f32[64,256]{1,0} broadcast(%constant.1), dimensions={}
  %multiply.1 = f32[64,256]{1,0} multiply(%param_0, %broadcast.1), metadata={op_name="jit(f)/mul" stack_frame_id=2}
  ROOT %tanh.1 = f32[64,256]{1,0} tanh(%multiply.1), metadata={op_name="jit(f)/jit(helper)/tanh" stack_frame_id=3}
}

ENTRY %main.5 (x.1: f32[64,128], w.1: f32[128,256]) -> f32[64,256] {
  %x.1 = f32[64,128]{1,0} parameter(0), metadata={op_name="x"}
  %w.1 = f32[128,256]{1,0} parameter(1), metadata={op_name="w"}
  %custom-call.1 = f32[64,256]{1,0} custom-call(%x.1, %w.1), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/dot_general" stack_frame_id=1}
  %dot.2 = f32[64,256]{1,0} dot(%x.1, %w.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot_general" stack_frame_id=1}
  ROOT %loop_tanh_fusion = f32[64,256]{1,0} fusion(%custom-call.1), kind=kLoop, calls=%fused_tanh, metadata={op_name="jit(f)/jit(helper)/tanh" stack_frame_id=3}
}
"""


@dataclass
class FakeEvent:
    name: str
    start_ns: float
    duration_ns: float
    stats: list[tuple[str, object]] = field(default_factory=list)


@dataclass
class FakeLine:
    name: str
    events: list[FakeEvent]


@dataclass
class FakePlane:
    name: str
    lines: list[FakeLine]


def _kernel(name: str, op: str, start: float, duration: float, correlation: int) -> FakeEvent:
    return FakeEvent(name, start, duration, [("hlo_op", op), ("hlo_module", "jit_f"), ("program_id", 7),
                                             ("correlation_id", correlation)])


def _capture() -> list[FakePlane]:
    stream: list[FakeEvent] = []
    derived: list[FakeEvent] = []
    for call, base in enumerate((0.0, 100_000.0)):
        stream.append(_kernel("sm90_xmma_gemm_f32f32_tn_n", "custom-call.1", base, 30_000, 2 * call))
        stream.append(_kernel("loop_tanh_fusion", "loop_tanh_fusion", base + 32_000, 8_000, 2 * call + 1))
        derived.append(_kernel("custom-call.1", "custom-call.1", base, 30_000, 2 * call))
    copy = FakeEvent("MemcpyD2H", 50_000, 2_000, [("memcpy_details", "kind_dst:host size:65536")])
    host = FakePlane("/host:CPU", [FakeLine("python", [FakeEvent("PjitFunction(f)", 0, 200_000)])])
    gpu = FakePlane("/device:GPU:0", [FakeLine("Stream #13(Compute)", stream), FakeLine("Stream #14(MemcpyD2H)",
                                      [copy]), FakeLine("XLA Ops", derived)])
    return [host, gpu]


class FakeProfileData:
    @staticmethod
    def from_file(path: str) -> FakeProfileData:
        data = FakeProfileData()
        data.planes = _capture()  # type: ignore[attr-defined]
        return data


@pytest.fixture
def gpu_events(monkeypatch):
    monkeypatch.setattr(jp, "profile_data_class", lambda: FakeProfileData)
    return jp.read_events("capture.xplane.pb")


def test_reading_keeps_kernels_and_copies_and_skips_derived_lines(gpu_events):
    assert {e.line for e in gpu_events} == {"Stream #13(Compute)", "Stream #14(MemcpyD2H)"}
    assert all(e.on_device for e in gpu_events)
    assert sum(1 for e in gpu_events if "hlo_op" in e.stats) == 4
    assert gpu_events[0].stats["program_id"] == "7"  # stats are text, whatever type ProfileData gave


def test_device_times_split_calls_without_run_ids(gpu_events):
    times = device_times(gpu_events, "jit_f", calls=2)
    assert times.on_device and times.executions == 2
    assert {o.name: o.seconds for o in times.ops} == pytest.approx({"custom-call.1": 60e-6, "loop_tanh_fusion": 16e-6})
    assert times.busy == pytest.approx(76e-6)
    assert times.span == pytest.approx(80e-6)  # 2 us idle between the gemm and the fusion, per call
    assert times.copies == pytest.approx(2e-6)


def test_gpu_kernels_are_attributed_to_lines_and_helpers(gpu_events):
    module = parse_module(HLO)
    times = device_times(gpu_events, "jit_f", calls=2)
    result = attribute(times, module, FunctionSpan("/proj/model.py", 9, 12), 2, lambda f: f.startswith("/proj"))
    by_line = {line.location.line: line for line in result.lines}
    assert by_line[10].seconds == pytest.approx(30e-6)  # the cuBLAS gemm: its own line
    assert by_line[10].primitives == ("dot_general",)
    # The fusion: multiply (line 11) and tanh (helper's line 3, called from ... nowhere in f: listed outside)
    assert by_line[11].seconds + by_line[3].seconds == pytest.approx(8e-6)
    assert by_line[11].seconds == pytest.approx(by_line[3].seconds)  # equal FLOPs: equal shares
    assert not by_line[3].in_function and by_line[11].in_function
    assert result.ops[0].name == "custom-call.1" and result.ops[0].category == "compute"


def test_stack_frames_parent_ids_and_flops_from_shapes():
    module = parse_module(HLO)
    instructions = module.instructions()
    dot, computation = instructions["dot.2"]
    from jitscope.profiling.hlo import instruction_flops

    assert instruction_flops(dot, module, computation.by_name()) == 2 * 64 * 256 * 128
    tanh, _ = instructions["tanh.1"]
    assert [(f.function, f.line) for f in module.stack(tanh)] == [("helper", 3)]


def test_nested_frames_follow_the_shifted_parent_ids():
    # As XLA prints them: a frame's parent id is one more than the frame it means (1 for a root).
    text = HLO.replace("3 {file_location_id=3 parent_frame_id=1}", "3 {file_location_id=3 parent_frame_id=1}\n"
                       "4 {file_location_id=3 parent_frame_id=3}")
    text = text.replace("stack_frame_id=3}\n}", "stack_frame_id=4}\n}", 1)
    module = parse_module(text)
    assert module.frames[4][1] == 2  # frame 4's parent is frame 2 (f line 11), printed as 3
    tanh, _ = module.instructions()["tanh.1"]
    assert [(f.function, f.line) for f in module.stack(tanh)] == [("helper", 3), ("f", 11)]


@pytest.mark.parametrize(("opcode", "name", "kind"), [
    ("all-reduce", "", "collective"), ("all-gather-start", "", "collective"), ("collective-permute-done", "",
                                                                                  "collective"),
    ("copy", "", "copy"), ("", "MemcpyD2H", "copy"), ("while", "", "control"), ("fusion", "", "compute"),
    ("", "ncclAllReduceKernel", "compute"),
])
def test_classify_op(opcode, name, kind):
    assert classify_op(opcode, name) == kind


def test_exclusive_time_of_a_loop_excludes_its_body():
    from jitscope.jaxcompat.profiler import XEvent

    loop = XEvent("/host:CPU", "t", "while.1", 0, 100, {"hlo_op": "while.1"})
    body = [XEvent("/host:CPU", "t", "fusion", s, 20, {"hlo_op": "fusion"}) for s in (10, 40, 70)]
    own = {e.start_ns: t for e, t in exclusive_times([loop, *body])}
    assert own[0] == 40 and own[10] == 20


def test_module_stat_with_a_program_id_still_matches(gpu_events):
    from dataclasses import replace

    renamed = [replace(e, stats={**e.stats, "hlo_module": "jit_f(7)"}) if "hlo_module" in e.stats else e
               for e in gpu_events]
    assert device_times(renamed, "jit_f", calls=2).busy == pytest.approx(76e-6)


def test_calls_without_run_ids_are_cut_at_the_widest_gaps():
    from jitscope.jaxcompat.profiler import XEvent
    from jitscope.profiling.events import executions

    def kernel(start: float) -> XEvent:
        return XEvent("/device:GPU:0", "Stream #13", "k", start, 10, {"hlo_op": "k", "hlo_module": "jit_f"})

    # Three calls with 3, 2 and 3 kernels (a data-dependent loop): 1-unit gaps inside, 50 between.
    starts = [0, 11, 22, 82, 93, 153, 164, 175]
    runs = executions([kernel(s) for s in starts], calls=3)
    assert [[e.start_ns for e in run] for run in runs] == [[0, 11, 22], [82, 93], [153, 164, 175]]
