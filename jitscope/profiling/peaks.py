"""Published peak FLOP/s and memory bandwidth of common accelerators, keyed by JAX's ``device_kind``.

Pure data and a lookup (no jax). Figures are the vendors' *dense* peaks (no 2:4 sparsity), per
chip as JAX sees one device: FLOP/s per element type of the work (``f64``, ``f32``; ``tf32``,
what f32 matmuls reach on tensor cores at JAX's default matmul precision; ``bf16``, ``f16``, on
tensor cores / the MXU) and HBM / GDDR bandwidth in bytes/s. A type a device has no published
figure for is absent (TPUs publish none for f32; V100 and T4 have no bf16 units), and work of that
type gets no share of peak. ``peak_for`` matches the ``device_kind`` string by regular
expression, case-insensitively, in table order: the more specific names come first (``H100 PCIe``
before ``H100``).
"""

from __future__ import annotations

import re

from jitscope.model.profile import DevicePeak

T = 1e12
G = 1e9

#: (pattern searched in device_kind, peak). Order matters: first match wins.
PEAKS: tuple[tuple[str, DevicePeak], ...] = (
    # NVIDIA H100 Tensor Core GPU datasheet (H100 SXM / H100 PCIe / H100 NVL columns; sparsity figures halved).
    (r"h100.*pcie", DevicePeak("NVIDIA H100 PCIe", {"f64": 25.6 * T, "f32": 51.2 * T, "tf32": 378 * T,
                                                    "bf16": 756 * T, "f16": 756 * T}, 2.0e12,
                               "NVIDIA H100 Tensor Core GPU datasheet")),
    (r"h100.*nvl", DevicePeak("NVIDIA H100 NVL", {"f64": 30 * T, "f32": 60 * T, "tf32": 417.5 * T,
                                                  "bf16": 835.5 * T, "f16": 835.5 * T}, 3.9e12,
                              "NVIDIA H100 Tensor Core GPU datasheet")),
    (r"h100", DevicePeak("NVIDIA H100 SXM5", {"f64": 33.5 * T, "f32": 66.9 * T, "tf32": 494.7 * T,
                                              "bf16": 989.4 * T, "f16": 989.4 * T}, 3.35e12,
                         "NVIDIA H100 Tensor Core GPU datasheet")),
    # NVIDIA H200 Tensor Core GPU datasheet (H200 SXM; not GH200, whose figures differ).
    (r"(?<!g)h200", DevicePeak("NVIDIA H200 SXM", {"f64": 33.5 * T, "f32": 66.9 * T, "tf32": 494.7 * T,
                                                   "bf16": 989.4 * T, "f16": 989.4 * T}, 4.8e12,
                               "NVIDIA H200 Tensor Core GPU datasheet")),
    # NVIDIA A100 Tensor Core GPU datasheet (40GB/80GB, PCIe/SXM columns).
    (r"a100.*80gb.*pcie|a100.*pcie.*80gb", DevicePeak(
        "NVIDIA A100 80GB PCIe", {"f64": 9.7 * T, "f32": 19.5 * T, "tf32": 156 * T, "bf16": 312 * T,
                                  "f16": 312 * T}, 1935 * G, "NVIDIA A100 Tensor Core GPU datasheet")),
    (r"a100.*80gb", DevicePeak("NVIDIA A100 80GB SXM", {"f64": 9.7 * T, "f32": 19.5 * T, "tf32": 156 * T,
                                                        "bf16": 312 * T, "f16": 312 * T}, 2039 * G,
                               "NVIDIA A100 Tensor Core GPU datasheet")),
    (r"a100", DevicePeak("NVIDIA A100 40GB", {"f64": 9.7 * T, "f32": 19.5 * T, "tf32": 156 * T, "bf16": 312 * T,
                                              "f16": 312 * T}, 1555 * G, "NVIDIA A100 Tensor Core GPU datasheet")),
    # NVIDIA L4 Tensor Core GPU datasheet (no FP64 figure published).
    (r"\bl4\b", DevicePeak("NVIDIA L4", {"f32": 30.3 * T, "tf32": 60 * T, "bf16": 121 * T, "f16": 121 * T},
                           300 * G, "NVIDIA L4 Tensor Core GPU datasheet")),
    # NVIDIA Tesla V100 datasheet (V100S, V100 PCIe, V100 SXM2 columns); no bf16 units.
    (r"v100s", DevicePeak("NVIDIA V100S PCIe", {"f64": 8.2 * T, "f32": 16.4 * T, "f16": 130 * T}, 1134 * G,
                          "NVIDIA V100 Tensor Core GPU datasheet")),
    (r"v100.*pcie", DevicePeak("NVIDIA V100 PCIe", {"f64": 7 * T, "f32": 14 * T, "f16": 112 * T}, 900 * G,
                               "NVIDIA V100 Tensor Core GPU datasheet")),
    (r"v100", DevicePeak("NVIDIA V100 SXM2", {"f64": 7.8 * T, "f32": 15.7 * T, "f16": 125 * T}, 900 * G,
                         "NVIDIA V100 Tensor Core GPU datasheet")),
    # NVIDIA T4 Tensor Core GPU datasheet (FP16 is mixed precision on tensor cores); no bf16 units.
    (r"\bt4\b", DevicePeak("NVIDIA T4", {"f32": 8.1 * T, "f16": 65 * T}, 320 * G, "NVIDIA T4 datasheet")),
    # NVIDIA Ada GPU architecture whitepaper, RTX 4090 (tensor figures with FP32 accumulate, dense).
    (r"rtx 4090", DevicePeak("NVIDIA GeForce RTX 4090", {"f32": 82.6 * T, "tf32": 82.6 * T, "bf16": 165.2 * T,
                                                         "f16": 165.2 * T}, 1008 * G,
                             "NVIDIA Ada GPU architecture whitepaper")),
    # Google Cloud TPU documentation, system architecture pages (per chip; JAX shows one device per chip
    # on v4 and later). JAX names v5e "TPU v5 lite", v6e "TPU v6 lite" and v5p "TPU v5".
    (r"tpu v6 ?(lite|e)", DevicePeak("TPU v6e", {"bf16": 918 * T}, 1640 * G, "Google Cloud TPU v6e documentation")),
    (r"tpu v5 ?(lite|e)", DevicePeak("TPU v5e", {"bf16": 197 * T}, 819 * G, "Google Cloud TPU v5e documentation")),
    (r"tpu v5p?\b", DevicePeak("TPU v5p", {"bf16": 459 * T}, 2765 * G, "Google Cloud TPU v5p documentation")),
    (r"tpu v4(?! ?lite)", DevicePeak("TPU v4", {"bf16": 275 * T}, 1200 * G, "Google Cloud TPU v4 documentation")),
)

#: XLA element types -> the key of their peak in ``DevicePeak.flops``.
DTYPE_CLASS = {"f64": "f64", "f32": "f32", "bf16": "bf16", "f16": "f16"}


def peak_for(device_kind: str) -> DevicePeak | None:
    """The published peaks of the device JAX names ``device_kind``; None for a CPU or a device not in the table."""
    for pattern, peak in PEAKS:
        if re.search(pattern, device_kind, re.IGNORECASE):
            return peak
    return None


def peak_flops(peak: DevicePeak, dtype: str) -> float | None:
    """The dense peak FLOP/s for work whose result is of XLA element type ``dtype`` (f32 -> the f32 peak)."""
    key = DTYPE_CLASS.get(dtype)
    return peak.flops.get(key) if key else None
