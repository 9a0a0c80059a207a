"""Why the compile is slow: the compile-time section (profiling/compile_phases.py, compile_lines.py,
compile_time.py; jaxcompat/compile_profile.py; tracing/line_sampler.py). Rankings and structure only, never
a wall-clock time."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from jitscope.api.commands.trace import run_trace
from jitscope.jaxcompat.compile_profile import CompileCapture
from jitscope.jaxcompat.profiler import XEvent
from jitscope.model.common import Location, from_jsonable, to_jsonable
from jitscope.model.trace import SourceLineRecord, TraceReport
from jitscope.profiling.compile_lines import CompileTimes, codegen_by_line, compile_lines, copies_of
from jitscope.profiling.compile_phases import shown_name, xla_phases
from jitscope.profiling.compile_time import compile_time_record
from jitscope.report.views.compile_time import compile_time_section
from jitscope.report.writers.html import section_html
from tests.conftest import ROOT, run_cli

HELDOUT = ROOT / "tests" / "targets" / "compile_heldout"
TARGET = f"{HELDOUT / 'model.py'}:layer"
SHAPES = "f32[4,8], f32[8,8], f32[8]"
LOOP_LINE = 11  # h = h * 0.9 + jnp.tanh(h), in a loop of 40


def _event(name: str, start: float, duration: float, line: str = "compiler", **stats: str) -> XEvent:
    return XEvent("/host:CPU", line, name, start * 1e6, duration * 1e6, dict(stats))


# -- pure: phases from events ---------------------------------------------------------------------------


def test_phases_open_the_dominant_step_and_add_up_to_the_compile():
    events = [
        _event("PjRtCpuClient::Compile", 0, 100),
        _event("HLO passes through layout assignment (jit_f)", 1, 10),
        _event("layout-assignment", 2, 4),
        _event("CpuCompiler::RunBackend", 20, 75),  # 75% of the compile, its children cover most: opened
        _event("ThunkEmitter::EmitEntryComputation", 21, 20),
        _event("Codegen", 45, 48),
        _event("FusionCompiler::Compile", 22, 8, line="codegen", module="add_fusion_kernel_module"),
        _event("CSEPass", 23, 3, line="codegen"),
    ]
    found = xla_phases(events)
    assert found.found and found.seconds == pytest.approx(100e-3)
    names = [p.name for p in found.phases]
    assert names[:3] == ["HLO passes through layout assignment", "ThunkEmitter::EmitEntryComputation", "Codegen"]
    assert "CpuCompiler::RunBackend (own time)" in names  # what its children do not cover
    assert sum(p.seconds for p in found.phases) == pytest.approx(100e-3)
    assert found.passes[0].name == "Codegen"
    assert found.kernels == {"add_fusion": pytest.approx(8e-3)}


def test_passes_are_named_in_plain_words_with_xlas_name_kept():
    assert shown_name("TaskDispatcher::dispatch") == "LLVM to machine code (TaskDispatcher::dispatch)"
    assert shown_name("PTX->CUBIN") == "ptxas (PTX->CUBIN)" and shown_name("CSEPass") == "CSEPass"


def test_a_capture_without_compile_events_has_no_phases():
    assert not xla_phases([_event("some-thunk", 0, 5)]).found


# -- pure: lines ----------------------------------------------------------------------------------------


def _src(line: int, eqns: int, primitives: tuple[tuple[str, int], ...]) -> SourceLineRecord:
    return SourceLineRecord(Location("/p/m.py", line, "f"), eqns, primitives=primitives)


def test_copies_are_the_repeats_of_a_lines_equations():
    assert copies_of((("add", 300), ("mul", 600))) == 300
    assert copies_of((("add", 2), ("mul", 1))) == 1
    assert copies_of(()) == 1


def test_codegen_time_follows_the_kernels_instructions_to_their_lines():
    instructions = {"add_fusion.1": {("/p/m.py", 3): 3.0, ("/p/m.py", 4): 1.0}, "wrapped_reduce-window": {None: 2.0}}
    split = codegen_by_line({"add_fusion_1": 0.4, "wrapped_reduce-window": 0.1, "unknown": 0.2}, instructions)
    assert split[("/p/m.py", 3)] == pytest.approx(0.3) and split[("/p/m.py", 4)] == pytest.approx(0.1)
    assert split[None] == pytest.approx(0.3)


def test_the_line_that_costs_most_ranks_first_with_measured_advice():
    source = (_src(3, 2, (("dot_general", 1), ("add", 1))), _src(5, 80, (("tanh", 40), ("mul", 40))))
    instructions = {"fusion": {("/p/m.py", 3): 2.0, ("/p/m.py", 5): 80.0}}
    counted = compile_lines(source, instructions)
    assert [r.location.line for r in counted if r.location] == [5, 3]
    assert counted[0].copies == 40 and counted[0].advice_basis == "rule of thumb" and "lax.scan" in counted[0].advice
    timed = compile_lines(source, instructions, CompileTimes(trace=0.1, lower=0.01, xla=1.0,
                                                             trace_by_line={("/p/m.py", 3): 0.01,
                                                                            ("/p/m.py", 5): 0.09}))
    assert timed[0].location is not None and timed[0].location.line == 5
    assert timed[0].advice_basis == "measured"
    assert sum(r.compile_share or 0.0 for r in timed) == pytest.approx(1.0)


def test_splitting_is_advised_only_where_the_compile_is_slow():
    """One line making most of a program is advised to split only when the compile is slow: measured, or
    without a measurement a large program; a one-line function is all one line, and fast."""
    source = (_src(3, 2, (("dot_general", 1), ("add", 1))), _src(5, 6, (("tanh", 3), ("mul", 3))))
    small = {"fusion": {("/p/m.py", 3): 2.0, ("/p/m.py", 5): 6.0}}
    large = {"fusion": {("/p/m.py", 3): 200.0, ("/p/m.py", 5): 1800.0}}
    assert compile_lines(source, small)[0].advice == ""
    assert "split the function" in compile_lines(source, large)[0].advice
    fast, slow = CompileTimes(trace=0.01, lower=0.01, xla=0.2), CompileTimes(trace=0.1, lower=0.1, xla=1.5)
    assert compile_lines(source, large, fast)[0].advice == ""
    assert "split the function" in compile_lines(source, small, slow)[0].advice


def test_a_persistent_cache_hit_invents_no_phase_split():
    capture = CompileCapture(events=[_event("PjRtCpuClient::Compile", 0, 1)], seconds=0.002, persistent_cache="hit")
    record = compile_time_record(source=(), hlo_text=None, jaxpr=None, is_user_file=lambda f: True,
                                 trace_seconds=0.1, lower_seconds=0.01, compile_seconds=0.002, capture=capture)
    assert record.phases == () and record.persistent_cache == "hit"
    assert "persistent compilation cache" in record.notes[0]


def test_a_jax_without_compile_events_gets_counts_and_one_line_why():
    capture = CompileCapture(events=[], seconds=0.05)
    record = compile_time_record(source=(_src(3, 1, (("sin", 1),)),), hlo_text=None, jaxpr=None,
                                 is_user_file=lambda f: True, trace_seconds=0.1, lower_seconds=0.01,
                                 compile_seconds=0.05, capture=capture)
    assert record.phases == () and len(record.notes) == 1 and record.notes[0].startswith("no phase split")
    assert record.lines[0].eqns == 1


# -- the held-out program, traced -----------------------------------------------------------------------


def _trace(compile_profile: bool):  # type: ignore[no-untyped-def]
    report, _ = run_trace([TARGET], [SHAPES], None, None, ("jaxpr", "hlo"), False, compile_profile=compile_profile)
    record = report.traces[0].compile_time
    assert record is not None
    return report, record


def test_the_unrolled_loop_ranks_first_by_its_counts():
    _, record = _trace(False)
    top = record.lines[0]
    assert top.location is not None and top.location.line == LOOP_LINE
    assert top.copies == 40 and top.hlo_share > 0.5 and "lax.scan" in top.advice
    assert not record.profiled and record.phases == ()


def test_compile_profile_measures_phases_and_the_loop_still_ranks_first():
    report, record = _trace(True)
    assert record.profiled and record.lines[0].location is not None and record.lines[0].location.line == LOOP_LINE
    assert record.lines[0].advice_basis == "measured"
    if not record.phases:  # a JAX whose capture lacks the events: says why, in one line
        assert record.notes and record.notes[0].startswith("no phase split")
        return
    assert record.phase_total == pytest.approx(record.compile_seconds, rel=0.01)
    assert record.passes and record.persistent_cache in ("", "miss")
    assert any(line.codegen_seconds for line in record.lines)
    again = from_jsonable(TraceReport, json.loads(json.dumps(to_jsonable(report))))
    assert again.traces[0].compile_time == record
    html = section_html(compile_time_section(record))  # the HTML report's section
    assert "compile time" in html and "XLA phase" in html and "lax.scan" in html


def test_a_busy_profiler_loses_the_phases_only():
    import tempfile

    import jax

    with tempfile.TemporaryDirectory() as directory:
        jax.profiler.start_trace(directory)
        try:
            _, record = _trace(True)
        finally:
            jax.profiler.stop_trace()
    assert record.phases == () and len(record.notes) == 1 and "could not start" in record.notes[0]
    assert record.lines[0].location is not None and record.lines[0].location.line == LOOP_LINE


def test_cli_json_and_a_failing_compile(tmp_path):  # type: ignore[no-untyped-def]
    result = run_cli("trace", TARGET, "--shapes", SHAPES, "--stages", "jaxpr,hlo", "-f", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == "1.6"
    lines = doc["traces"][0]["compile_time"]["lines"]
    assert lines[0]["location"]["line"] == LOOP_LINE and lines[0]["copies"] == 40
    failed = run_cli("trace", f"{HELDOUT / 'model.py'}:broken", "--shapes", "f32[8]", "--stages", "jaxpr,hlo",
                     "--compile-profile")
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert failed.stderr.startswith("error: ") and "the phases up to the failure" in failed.stderr
    section = failed.stdout[failed.stdout.index("compile time"):]
    assert "the compile failed" in section and ("XLA phase" in section or "no phase split" in section)
    assert os.path.basename(TARGET.split(":")[0]) == "model.py"


# -- jitscope diff and bench ----------------------------------------------------------------------------


def test_diff_matches_lines_by_text_and_phases_by_name():
    from jitscope.comparison.compile_time import compare_compile_times
    from jitscope.comparison.sources import SourceTree
    from jitscope.model.compile import CompileLine, CompilePhase, CompileTimeRecord

    def side(file: str, loop_line: int, hlo: int, codegen: float) -> tuple[CompileTimeRecord, SourceTree]:
        text = ("h = jnp.tanh(x)", "", "for _ in range(n):", "h = h * 0.9 + h")
        lines = (CompileLine(Location(file, loop_line, "f"), hlo, 0.9, hlo, 0.9, hlo),
                 CompileLine(Location(file, 1, "f"), 1, 0.1, 2, 0.1))
        tree = SourceTree("/", {file.lstrip("/"): text[:1] + ("",) * (loop_line - 2) + text[3:]})
        return CompileTimeRecord(lines, phases=(CompilePhase("Codegen", codegen),), compile_seconds=codegen,
                                 profiled=True), tree

    old, old_tree = side("/a/old.py", 4, 300, 2.0)
    assert compare_compile_times(old, dataclasses.replace(old, profiled=False), old_tree, old_tree) is not None
    new, new_tree = side("/a/new.py", 6, 30, 0.5)  # the loop moved down two lines, in another file
    found = compare_compile_times(old, new, old_tree, new_tree)
    assert found is not None
    assert [(m.label, m.old, m.new) for m in found.lines] == [("new.py:6", 300.0, 30.0)]
    assert found.phases[1].name == "phase:Codegen" and found.phases[1].change == pytest.approx(-0.75)
    assert all(m.noisy for m in found.phases)


def test_bench_compile_profile_adds_the_section_and_json(tmp_path):  # type: ignore[no-untyped-def]
    out = tmp_path / "bench.json"
    result = run_cli("bench", TARGET, "--shapes", SHAPES, "--compile-profile", "--budget", "0.02",
                     "--min-rounds", "2", "--no-dispatch", "--save", str(out))
    assert result.returncode == 0, result.stderr
    assert "compile time: " in result.stdout and ("XLA phase" in result.stdout or "no phase split" in result.stdout)
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == "1.3"
    assert doc["rows"][0]["compile_time"]["lines"][0]["location"]["line"] == LOOP_LINE


def _spin(seconds: float) -> None:
    import time

    end = time.perf_counter() + seconds
    while time.perf_counter() < end:  # the line the sampler must find
        pass


def test_the_sampler_lists_time_at_the_innermost_user_line():
    import inspect

    from jitscope.tracing.line_sampler import LineSampler

    with LineSampler(lambda file: file == __file__) as sampler:
        _spin(0.1)
    seconds = sampler.seconds(0.1)
    busy = max(seconds, key=lambda k: seconds[k])
    spin_lines = range(_spin.__code__.co_firstlineno, _spin.__code__.co_firstlineno + len(inspect.getsource(_spin).splitlines()))
    assert busy is not None and busy[0] == __file__ and busy[1] in spin_lines
    assert sum(seconds.values()) == pytest.approx(0.1)


def test_one_compile_per_static_variant_is_noted():
    from jitscope.profiling.compile_record import static_variants_noted
    from jitscope.model.compile import CompileTimeRecord

    record = CompileTimeRecord()
    noted = static_variants_noted([("m:f", True, record), ("m:f", True, record), ("m:g", False, record),
                                   ("m:h", True, record)])
    assert all("static variant" in n.notes[0] for n in noted[:2] if n is not None)
    assert noted[2] == record and noted[3] == record  # one compile each: nothing to say


def test_a_kernels_compile_is_not_taken_for_the_whole_compile():
    kernels_only = [_event("FusionCompiler::Compile", 0, 8, module="add_fusion_kernel_module"),
                    _event("JitCompiler::Compile", 10, 20)]
    assert not xla_phases(kernels_only).found
    assert xla_phases([_event("PjRtStreamExecutorClient::CompileAndLoad", 0, 5)]).found


def test_phases_look_through_a_single_wrapper_and_keep_a_renamed_steps_name():
    events = [
        _event("PjRtCpuClient::Compile", 0, 100),
        _event("CpuCompiler::RunBackend", 0, 90),
        _event("CpuCompiler::CompileCpuExecutable", 1, 88),  # the backend's only child
        _event("ThunkEmitter::EmitEntryComputation", 2, 30),
        _event("Codegen", 40, 45),
        _event("JitCompiler::Compile", 40, 45),  # Codegen's only child: a rename, not a split
    ]
    names = [p.name for p in xla_phases(events).phases]
    assert names[:2] == ["ThunkEmitter::EmitEntryComputation", "Codegen"]
    assert "JitCompiler::Compile" not in names
