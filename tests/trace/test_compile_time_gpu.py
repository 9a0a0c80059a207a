"""Why the compile is slow, on a GPU: real captures around ``lowered.compile()`` on an NVIDIA H100 (jax 0.11.2,
``tests/targets/gpu_captures/compile_*``), read on machines without a GPU. Structure and rankings only."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from jitscope.jaxcompat.compile_profile import CompileCapture
from jitscope.jaxcompat.profiler import XEvent, read_compile_events
from jitscope.model.jaxpr import JaxprRecord
from jitscope.profiling.compile_phases import xla_phases
from jitscope.profiling.compile_time import compile_time_record
from jitscope.report.views.compile_time import compile_time_section
from jitscope.report.views.document import Document
from jitscope.report.writers import render_document
from tests.conftest import ROOT

CAPTURES = ROOT / "tests" / "targets" / "gpu_captures"
NO_JAXPR = JaxprRecord((), (), (), ())


def _events(name: str, tmp_path: Path) -> list[XEvent]:
    path = tmp_path / f"{name}.xplane.pb"
    path.write_bytes(gzip.decompress((CAPTURES / f"compile_{name}.xplane.pb.gz").read_bytes()))
    return read_compile_events(str(path))


def _hlo(name: str) -> str:
    return gzip.decompress((CAPTURES / f"compile_{name}.hlo.txt.gz").read_bytes()).decode()


def test_the_c_api_clients_compile_is_the_root_and_llvm_and_ptxas_are_named(tmp_path):  # type: ignore[no-untyped-def]
    """An unrolled loop (200 copies): no autotuning to speak of; LLVM and ptxas are most of it."""
    events = _events("unrolled_200", tmp_path)
    found = xla_phases(events)
    outer = next(e for e in events if e.name.startswith("PjRtCApiClient::CompileAndLoad"))
    assert found.found and found.seconds == pytest.approx(outer.duration_ns * 1e-9)  # the C API's part included
    assert sum(p.seconds for p in found.phases) == pytest.approx(found.seconds)
    names = [p.name for p in found.phases]
    assert "HLO Transforms" in names  # ":jit_layer" taken off, so two functions' phases compare by name
    assert "LLVM IR, LLVM and ptxas (CompileModuleToLlvmIr)" in names
    passes = {p.name: p for p in found.passes}
    assert passes["ptxas (PTX->CUBIN)"].runs == 3 and "LLVM (Compiling IR:LLVMDialectModule)" in passes
    assert "priority-fusion" in passes
    assert found.threads > 1


def test_autotuning_is_a_phase_with_its_candidates_and_no_cuda_activity_is_a_pass(tmp_path):  # type: ignore[no-untyped-def]
    found = xla_phases(_events("transformer_step", tmp_path))
    biggest = max(found.phases, key=lambda p: p.seconds)
    assert biggest.name == "autotuning (config-assigner)" and biggest.seconds > 0.5 * found.seconds
    tuning = found.autotuning
    assert tuning is not None and tuning.seconds == pytest.approx(biggest.seconds, rel=0.01)
    assert tuning.candidates > 100 and tuning.timed_runs > 100
    assert sum(tuning.fusions.values()) == pytest.approx(tuning.seconds)
    assert all(re.fullmatch(r"[\w.-]+", name) for name in tuning.fusions)  # fusions, by their HLO names
    for p in found.passes:  # the autotuner's copies, allocations and candidate runs are not compiler passes
        assert not p.name.startswith(("Memcpy", "Memset", "cuMem", "stream_executor", "void "))
        assert ":XLA GPU module" not in p.name and not re.fullmatch(r"[\w-]+\.\d+", p.name)


def test_a_small_autotuning_pass_stays_inside_its_phase(tmp_path):  # type: ignore[no-untyped-def]
    found = xla_phases(_events("unrolled_200", tmp_path))
    assert found.autotuning is not None and found.autotuning.seconds < 0.02 * found.seconds
    assert not any(p.name.startswith("autotuning") for p in found.phases)


def test_autotuning_goes_to_the_lines_of_the_fusions_it_tuned(tmp_path):  # type: ignore[no-untyped-def]
    """The convolution: cuDNN's fused convolution and a transpose were tuned, both still in the optimised HLO,
    so the tuning time is the conv line's codegen; the note says what to do."""
    capture = CompileCapture(events=_events("conv", tmp_path))
    record = compile_time_record(source=(), hlo_text=_hlo("conv"), jaxpr=NO_JAXPR,
                                 is_user_file=lambda f: f.endswith("gpu_workloads.py"), trace_seconds=0.01,
                                 lower_seconds=0.01, compile_seconds=None, capture=capture)
    top = record.lines[0]
    assert top.location is not None and top.location.line == 41  # jax.lax.conv_general_dilated(...)
    tuning = xla_phases(capture.events).autotuning
    assert tuning is not None and top.codegen_seconds == pytest.approx(tuning.seconds, rel=0.01)
    assert any(n.startswith("XLA's GPU autotuning took") and "--xla_gpu_per_fusion_autotune_cache_dir" in n
               for n in record.notes)
    text = render_document(Document("conv", "trace", (compile_time_section(record),)), "text")
    assert "autotuning (config-assigner)" in text and "XLA's GPU autotuning took" in text


def test_a_fusion_replaced_by_a_library_call_keeps_its_tuning_in_the_rest(tmp_path):  # type: ignore[no-untyped-def]
    """In the transformer step some tuned fusions became cuBLAS calls: their time is not put on any one line
    as codegen (it is split with the rest of XLA's by HLO instructions), and the lines still add up."""
    capture = CompileCapture(events=_events("transformer_step", tmp_path))
    record = compile_time_record(source=(), hlo_text=_hlo("transformer_step"), jaxpr=NO_JAXPR,
                                 is_user_file=lambda f: f.endswith(("transformer.py", "gpu_workloads.py")),
                                 trace_seconds=None, lower_seconds=None, compile_seconds=None, capture=capture)
    found = xla_phases(capture.events)
    assert found.autotuning is not None
    codegen = sum(line.codegen_seconds or 0.0 for line in record.lines)
    assert 0 < codegen < found.autotuning.seconds
    assert sum(line.compile_seconds or 0.0 for line in record.lines) == pytest.approx(found.seconds)


def test_a_persistent_cache_hit_on_a_gpu_has_no_compile_to_split(tmp_path):  # type: ignore[no-untyped-def]
    assert not xla_phases(_events("pcache_hit", tmp_path)).found


def test_bench_says_only_the_first_cold_call_autotuned_on_a_gpu(monkeypatch):  # type: ignore[no-untyped-def]
    """Seen on an H100: three cold compiles of one transformer step, 11.8 s then 2.9 s twice (XLA keeps its
    autotuning results for the process). On CPU nothing is said."""
    from jitscope.timing import runner

    monkeypatch.setattr("jitscope.jaxcompat.profiler.device_description", lambda: ("gpu", "NVIDIA H100 80GB HBM3"))
    (note,) = runner._autotuned_once([11.79, 2.88, 2.92])
    assert "first compile took 11.8 s" in note and "only the first autotuned" in note and "--cold-process" in note
    assert runner._autotuned_once([3.0, 2.88, 2.92]) == []  # no outlier
    assert runner._autotuned_once([11.79]) == []  # one cold call: nothing to compare
    monkeypatch.setattr("jitscope.jaxcompat.profiler.device_description", lambda: ("cpu", "cpu"))
    assert runner._autotuned_once([11.79, 2.88, 2.92]) == []


def test_bench_compile_profile_on_a_gpu_profiles_the_first_measured_compile(monkeypatch):  # type: ignore[no-untyped-def]
    """On a GPU a second compile of the same program would not autotune, so bench --compile-profile reads
    XLA's phases from the measured first cold call itself. Run here on CPU with the backend taken for a GPU:
    the phases are that compile's (they add up to it), and the later cold calls are not captured."""
    import jax.numpy as jnp

    import jitscope
    from jitscope.jaxcompat import compile_profile

    monkeypatch.setattr("jitscope.jaxcompat.profiler.device_description", lambda: ("gpu", "NVIDIA H100 80GB HBM3"))
    captures: list[CompileCapture] = []
    real = compile_profile.capture_compile

    def counted(result=None):  # type: ignore[no-untyped-def]
        captures.append(result)
        return real(result)

    monkeypatch.setattr(compile_profile, "capture_compile", counted)

    def step(x, w):  # type: ignore[no-untyped-def]
        for _ in range(20):
            x = jnp.tanh(x @ w)
        return x.sum()

    x = jnp.ones((8, 8))
    result = jitscope.bench(step, x, x, cold_runs=2, compile_profile=True, budget=0.02, min_rounds=2)
    (row,) = result.rows
    assert len(captures) == 1  # the first cold call only, not the second
    record = row.compile_time
    assert record is not None and record.profiled
    if record.phases:  # a JAX whose capture holds XLA's events (0.10+ on CPU)
        assert record.compile_seconds == pytest.approx(row.cold.runs[0].compile)
        assert record.phase_total == pytest.approx(row.cold.runs[0].compile, rel=1e-6)
    assert record.lines[0].location is not None and record.lines[0].location.line == step.__code__.co_firstlineno + 2
