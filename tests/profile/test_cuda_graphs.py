"""Kernels that ran inside CUDA graphs (XLA's command buffers) given back to their instructions and lines.

The events are shaped as a real H200 capture had them (jax 0.11.2, 2026-11-27): every kernel of the graph
carries ``hlo_op=command_buffer_1`` and a ``cuda_graph_id``; XLA's own kernels are named after their fusion
(``loop_tanh_fusion``), a fusion identical to an earlier one runs the earlier one's kernel (same name), and
cuBLAS kernels carry cuBLAS's names, a split-K reduction after its gemm; memsets come before the kernel whose
buffer they clear. Before the graph step, all of it was one op, ``command_buffer_1``, with no source line
(0% of the transformer step's device time on lines, where the same step without graphs had 99.8%).
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import pytest

from jitscope.jaxcompat.profiler import XEvent, read_events
from jitscope.profiling.attribute import FunctionSpan, attribute
from jitscope.profiling.events import device_times
from jitscope.profiling.graphs import kernel_name, resolve_graph_kernels
from jitscope.profiling.hlo import parse_module

HLO = """HloModule jit_f, is_scheduled=true

FileNames
1 "/proj/model.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=4 end_column=9}
2 {file_name_id=1 function_name_id=1 line=11 end_line=11 column=4 end_column=9}
3 {file_name_id=1 function_name_id=1 line=12 end_line=12 column=4 end_column=9}
4 {file_name_id=1 function_name_id=1 line=13 end_line=13 column=4 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}
3 {file_location_id=3 parent_frame_id=1}
4 {file_location_id=4 parent_frame_id=1}


%fused_tanh (param_0: f32[64,64]) -> f32[64,64] {
  %param_0 = f32[64,64]{1,0} parameter(0)
  ROOT %tanh.1 = f32[64,64]{1,0} tanh(%param_0), metadata={op_name="jit(f)/tanh" stack_frame_id=2}
}

%fused_tanh.1 (param_0.1: f32[64,64]) -> f32[64,64] {
  %param_0.1 = f32[64,64]{1,0} parameter(0)
  ROOT %tanh.2 = f32[64,64]{1,0} tanh(%param_0.1), metadata={op_name="jit(f)/tanh" stack_frame_id=4}
}

%command_buffer (p0: f32[64,64], p1: f32[64,64]) -> f32[64,64] {
  %p0 = f32[64,64]{1,0} parameter(0)
  %p1 = f32[64,64]{1,0} parameter(1)
  %custom-call.1 = (f32[64,64]{1,0}, s8[1024]{0}) custom-call(%p0, %p1), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/dot_general" stack_frame_id=1}
  %get-tuple-element.1 = f32[64,64]{1,0} get-tuple-element(%custom-call.1), index=0
  %loop_tanh_fusion = f32[64,64]{1,0} fusion(%get-tuple-element.1), kind=kLoop, calls=%fused_tanh, metadata={op_name="jit(f)/tanh" stack_frame_id=2}
  %custom-call.2 = (f32[64,64]{1,0}, s8[1024]{0}) custom-call(%loop_tanh_fusion, %p1), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/dot_general" stack_frame_id=3}
  %get-tuple-element.2 = f32[64,64]{1,0} get-tuple-element(%custom-call.2), index=0
  ROOT %loop_tanh_fusion.1 = f32[64,64]{1,0} fusion(%get-tuple-element.2), kind=kLoop, calls=%fused_tanh.1, metadata={op_name="jit(f)/tanh" stack_frame_id=4}
}

ENTRY %main.9 (x.1: f32[64,64], w.1: f32[64,64]) -> f32[64,64] {
  %x.1 = f32[64,64]{1,0} parameter(0), metadata={op_name="x"}
  %w.1 = f32[64,64]{1,0} parameter(1), metadata={op_name="w"}
  ROOT %command_buffer_1 = f32[64,64]{1,0} call(%x.1, %w.1), to_apply=%command_buffer
}
"""

GEMM = "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_warpgroupsize1x1x1_execute_kernel__5x_cublas"


def _graph(name: str, start: float, duration: float) -> XEvent:
    return XEvent("/device:GPU:0", "Stream #14(Memset,Compute)", name, start, duration,
                  {"hlo_op": "command_buffer_1", "hlo_module": "jit_f", "cuda_graph_id": "122"})


def _capture(calls: int = 2) -> list[XEvent]:
    """Per call: memset, gemm, fusion, gemm + split-K reduction, the reused fusion kernel; then a host gap."""
    events = []
    for call in range(calls):
        t = call * 1_000_000.0
        events += [_graph("Memset 0", t, 1_000), _graph(GEMM, t + 2_000, 30_000),
                   _graph("loop_tanh_fusion", t + 33_000, 5_000), _graph(GEMM, t + 40_000, 20_000),
                   _graph("splitKreduce_kernel", t + 61_000, 4_000), _graph("loop_tanh_fusion", t + 66_000, 6_000)]
    return events


def test_every_graph_kernel_is_given_its_instruction():
    resolved = resolve_graph_kernels(_capture(), parse_module(HLO), calls=2)
    ops = [e.stats["hlo_op"] for e in resolved.events]
    one_call = ["custom-call.1", "custom-call.1", "loop_tanh_fusion", "custom-call.2", "custom-call.2",
                "loop_tanh_fusion.1"]
    assert ops == one_call * 2  # the memset with its gemm, the split-K with its own, the reused kernel placed
    assert (resolved.by_name, resolved.unresolved, resolved.graphs) == (2, 0, ("command_buffer_1",))
    assert resolved.by_order == 8  # per call: two gemms, the split-K reduction and the reused fusion kernel


def test_graph_kernels_reach_their_lines():
    module = parse_module(HLO)
    resolved = resolve_graph_kernels(_capture(), module, calls=2)
    times = device_times(resolved.events, "jit_f", calls=2)
    result = attribute(times, module, FunctionSpan("/proj/model.py", 9, 14), 2, lambda f: f.startswith("/proj"))
    by_line = {line.location.line: line.seconds for line in result.lines}
    assert by_line == pytest.approx({10: 31e-6, 11: 5e-6, 12: 24e-6, 13: 6e-6})


def test_events_outside_graphs_are_left_alone():
    plain = [XEvent("/device:GPU:0", "Stream #13", "loop_tanh_fusion", 0, 5_000,
                    {"hlo_op": "loop_tanh_fusion", "hlo_module": "jit_f"})]
    resolved = resolve_graph_kernels(plain, parse_module(HLO), calls=1)
    assert resolved.events == plain and not resolved.graphs


def test_kernel_names_follow_xla():
    assert kernel_name("loop_add_fusion.3") == "loop_add_fusion_3"
    assert kernel_name("input_reduce_fusion") == "input_reduce_fusion"
    assert kernel_name("wrapped-subtract.8") == "wrapped_subtract_8"


# -- a real capture: the transformer step on an H200 -------------------------------------------------------

CAPTURES = Path(__file__).resolve().parents[1] / "targets" / "gpu_captures"


def _unpacked(name: str, tmp_path: Path) -> Path:
    out = tmp_path / name.removesuffix(".gz")
    out.write_bytes(gzip.decompress((CAPTURES / name).read_bytes()))
    return out


def test_real_graph_kernels_match_the_kernels_run_without_graphs(tmp_path: Path):
    """Without graphs every kernel names its instruction; with graphs each resolved kernel names the same."""
    module = parse_module(_unpacked("transformer_step.hlo.txt.gz", tmp_path).read_text())
    truth = [e for e in read_events(str(_unpacked("transformer_step.no_graphs.xplane.pb.gz", tmp_path)))
             if e.on_device and "hlo_op" in e.stats]
    as_graph = [dataclasses.replace(e, stats={**e.stats, "hlo_op": "command_buffer_1", "cuda_graph_id": "1"})
                for e in truth]
    resolved = resolve_graph_kernels(as_graph, module, calls=5)
    assert resolved.unresolved == 0
    assert [e.stats["hlo_op"] for e in resolved.events] == [e.stats["hlo_op"] for e in truth]


def test_real_graph_capture_puts_the_step_on_its_lines(tmp_path: Path):
    module = parse_module(_unpacked("transformer_step.hlo.txt.gz", tmp_path).read_text())
    events = read_events(str(_unpacked("transformer_step.graphs.xplane.pb.gz", tmp_path)))
    resolved = resolve_graph_kernels(events, module, calls=5)
    assert resolved.graphs == ("command_buffer_1",) and resolved.unresolved == 0
    span = FunctionSpan("/work/main/benchmarks/targets/gpu_workloads.py", 51, 56)  # where it ran
    result = attribute(device_times(resolved.events, module.name, calls=5), module, span, 5,
                       lambda f: "gpu_workloads" in f or "transformer" in f)
    on_lines = sum(line.seconds for line in result.lines)
    per_call = device_times(events, module.name, calls=5).op_seconds / 5
    assert result.no_source == 0 and on_lines == pytest.approx(per_call)
    before = attribute(device_times(events, module.name, calls=5), module, span, 5, lambda f: True)
    assert not before.lines  # what the H200 showed: 0% on lines
