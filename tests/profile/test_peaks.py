"""Device peaks: the table's lookup by JAX's device_kind, each line's and op's share of them, and where they show."""

from __future__ import annotations

import dataclasses
import json

import pytest

from jitscope.model.common import from_jsonable, to_jsonable
from jitscope.model.profile import PROFILE_SCHEMA_VERSION, ProfileReport
from jitscope.profiling.attribute import FunctionSpan, attribute
from jitscope.profiling.events import device_times
from jitscope.profiling.hlo import parse_module
from jitscope.profiling.peaks import PEAKS, peak_flops, peak_for
from jitscope.report.views.profile import profile_document, top_lines, top_ops
from jitscope.report.writers import render_document
from jitscope.report.writers.json import dumps
from tests.profile.test_gpu_events import HLO, gpu_events  # noqa: F401 - the fake GPU capture's fixture

H100 = "NVIDIA H100 80GB HBM3"


@pytest.mark.parametrize(("kind", "device"), [
    (H100, "NVIDIA H100 SXM5"),
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
    ("NVIDIA H100 NVL", "NVIDIA H100 NVL"),
    ("NVIDIA H200", "NVIDIA H200 SXM"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 40GB"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB SXM"),
    ("NVIDIA A100 80GB PCIe", "NVIDIA A100 80GB PCIe"),
    ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 40GB"),
    ("NVIDIA L4", "NVIDIA L4"),
    ("Tesla V100-SXM2-16GB", "NVIDIA V100 SXM2"),
    ("Tesla V100-PCIE-32GB", "NVIDIA V100 PCIe"),
    ("Tesla V100S-PCIE-32GB", "NVIDIA V100S PCIe"),
    ("Tesla T4", "NVIDIA T4"),
    ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"),
    ("TPU v4", "TPU v4"),
    ("TPU v5 lite", "TPU v5e"),
    ("TPU v5e", "TPU v5e"),
    ("TPU v5", "TPU v5p"),
    ("TPU v5p", "TPU v5p"),
    ("TPU v6 lite", "TPU v6e"),
])
def test_lookup_by_device_kind(kind, device):
    peak = peak_for(kind)
    assert peak is not None and peak.device == device
    assert peak.bytes_per_second > 1e11 and peak.source and peak.flops


@pytest.mark.parametrize("kind", ["cpu", "", "NVIDIA L40S", "NVIDIA GH200 480GB", "TPU v4 lite", "TPU v3",
                                  "AMD Instinct MI300X", "NVIDIA A10G"])
def test_unknown_devices_have_no_peak(kind):
    assert peak_for(kind) is None


def test_peaks_are_per_element_type():
    h100 = peak_for(H100)
    assert h100 is not None
    assert peak_flops(h100, "f32") == pytest.approx(66.9e12)
    assert peak_flops(h100, "bf16") == pytest.approx(989.4e12)
    assert peak_flops(h100, "s32") is None and peak_flops(h100, "pred") is None
    tpu = peak_for("TPU v4")
    assert tpu is not None and peak_flops(tpu, "f32") is None  # no published f32 figure
    for _, peak in PEAKS:  # dense peaks: tensor-core figures above the plain f32 one
        assert set(peak.flops) <= {"f64", "f32", "tf32", "bf16", "f16"}
        assert all(peak.flops[k] >= peak.flops["f32"] for k in ("tf32", "bf16", "f16")
                   if k in peak.flops and "f32" in peak.flops)


#: The gemm as XLA's GPU compiler writes it: the product and an s8 workspace, the dot's dimensions in backend_config.
GEMM = ('%custom-call.1 = (f32[64,256]{1,0}, s8[4194304]{0}) custom-call(%x.1, %w.1), '
        'custom_call_target="__cublas$gemm", backend_config={"operation_queue_id":"0","wait_on_operation_queues":[],'
        '"gemm_backend_config":{"alpha_real":1,"alpha_imag":0,"beta":0,"dot_dimension_numbers":{'
        '"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],'
        '"rhs_batch_dimensions":[]},"precision_config":{"operand_precision":["DEFAULT","DEFAULT"],'
        '"algorithm":"ALG_UNSET"},"epilogue":"DEFAULT"}}, metadata={op_name="jit(f)/dot_general" stack_frame_id=1}\n'
        '  %get-tuple-element.1 = f32[64,256]{1,0} get-tuple-element(%custom-call.1), index=0')
GEMM_HLO = HLO.replace(next(line.strip() for line in HLO.splitlines() if "__cublas$gemm" in line), GEMM).replace(
    "fusion(%custom-call.1)", "fusion(%get-tuple-element.1)")


def _attributed(events, kind: str, hlo: str = HLO):
    times = device_times(events, "jit_f", calls=2)
    return attribute(times, parse_module(hlo), FunctionSpan("/proj/model.py", 9, 12), 2,
                     lambda f: f.startswith("/proj"), peak=peak_for(kind))


def test_shares_of_peak_on_a_gpu_capture(gpu_events):  # noqa: F811
    result = _attributed(gpu_events, H100)
    fusion = next(op for op in result.ops if op.name == "loop_tanh_fusion")
    # multiply and tanh, 64x256 f32 elements each, in 8 us; the f32 parameter read and the result written.
    assert fusion.dtype == "f32"
    assert fusion.flops_peak_share == pytest.approx(2 * 64 * 256 / 66.9e12 / 8e-6)
    assert fusion.bytes_peak_share == pytest.approx(2 * 64 * 256 * 4 / 8e-6 / 3.35e12)
    line = next(r for r in result.lines if r.location.line == 11)  # the multiply: half the fusion
    assert line.flops_peak_share == pytest.approx(64 * 256 / 66.9e12 / 4e-6)
    assert line.bytes_peak_share == pytest.approx(line.bytes_per_second / 3.35e12)
    gemm = next(r for r in result.lines if r.location.line == 10)  # a cuBLAS call: FLOPs not estimated
    assert gemm.flops_peak_share is None and gemm.bytes_peak_share is not None


def test_a_cublas_gemm_gets_its_dot_flops_and_a_share_of_peak(gpu_events):  # noqa: F811
    result = _attributed(gpu_events, H100, GEMM_HLO)
    gemm = next(op for op in result.ops if op.name == "custom-call.1")
    assert gemm.flops == 2 * 64 * 256 * 128 and gemm.dtype == "f32"
    assert gemm.bytes == (64 * 128 + 128 * 256 + 64 * 256) * 4  # operands and product; not the workspace
    assert gemm.flops_peak_share == pytest.approx(2 * 64 * 256 * 128 / 66.9e12 / 30e-6)
    line = next(r for r in result.lines if r.location.line == 10)
    assert line.flops_peak_share == pytest.approx(gemm.flops_peak_share)
    fusion = next(op for op in result.ops if op.name == "loop_tanh_fusion")  # reads the product through the gte
    assert fusion.bytes == 2 * 64 * 256 * 4


def test_no_shares_on_an_unknown_device(gpu_events):  # noqa: F811
    result = _attributed(gpu_events, "cpu")
    assert all(r.flops_peak_share is None and r.bytes_peak_share is None for r in (*result.lines, *result.ops))


def test_peak_columns_and_note_only_where_the_peak_is_known(profiled):
    row = profiled.rows[0]
    assert row.device_kind == "cpu" and row.peak is None
    text = render_document(profile_document(profiled), "text")
    assert "% peak" not in text
    assert text.count("device peak unknown for cpu") == 1  # once, for every row
    known = dataclasses.replace(row, peak=peak_for(H100), device_kind=H100, lines=tuple(
        dataclasses.replace(line, flops_peak_share=0.25, bytes_peak_share=None) for line in row.lines))
    assert [c.name for c in top_lines(known).columns][-3:] == ["% peak FLOP/s", "% peak B/s", "primitives"]
    assert top_lines(known).rows[0][-3:-1] == ("25%", "n/a")
    assert "% peak B/s" in [c.name for c in top_ops(known).columns]
    text = " ".join(render_document(profile_document(dataclasses.replace(profiled, rows=(known,))), "text").split())
    assert "NVIDIA H100 SXM5 (NVIDIA H100 Tensor Core GPU datasheet)" in text and "TF32" in text
    assert "device peak unknown" not in text


def test_a_1_0_document_still_loads_and_peaks_round_trip(profiled):
    data = json.loads(dumps(profiled))
    assert data["schema_version"] == PROFILE_SCHEMA_VERSION == "1.1"
    for row in data["rows"]:  # what a 1.0 document had
        for key in ("device_kind", "peak"):
            row.pop(key)
        for record in (*row["lines"], *row["ops"]):
            record.pop("flops_peak_share"), record.pop("bytes_peak_share"), record.pop("dtype", None)
    old = from_jsonable(ProfileReport, data)
    assert old.rows[0].peak is None and old.rows[0].device_kind == "" and old.rows[0].lines[0].flops_peak_share is None
    known = dataclasses.replace(profiled, rows=(dataclasses.replace(profiled.rows[0], peak=peak_for(H100)),))
    assert from_jsonable(ProfileReport, to_jsonable(known)) == known
