"""``jitscope doctor``'s diagnosis of a run record, on records built by hand: what each cause becomes, how
findings rank, the noise floor, the gate. Pure and fast; tests/doctor/test_doctor_cli.py runs real programs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jitscope.doctor.findings import diagnose
from jitscope.doctor.gate import gate_failure, parse_fail_on
from jitscope.doctor.program import diagnose_record
from jitscope.errors import UsageError
from jitscope.model.common import Location
from jitscope.model.doctor import (
    CACHE_DROPPED,
    EAGER_OPS,
    ESTIMATED,
    HOST_SYNC,
    JIT_IN_LOOP,
    NOT_ESTIMATED,
    RECOMPILE_SHAPE,
    RECOMPILE_STATIC,
    RECOMPILE_WEAK_TYPE,
    SLOW_COMPILE,
    TRACE_EFFECT,
)
from jitscope.model.effects import EffectKind, EffectRecord
from jitscope.model.keys import KeyDiff
from jitscope.model.run import JAX_INTERNAL, USER, CompileEvent, RunRecord, SyncSite
from jitscope.run.summary import summarize

DEF = Location("train.py", 10, "step")
CALL = Location("train.py", 30, "<module>")


def event(index: int, number: int, *causes: KeyDiff, function: str = "step", compile_s: float = 0.5,
          kind: str = USER, same_key_as: int = 0, effects: tuple[EffectRecord, ...] = (),
          call: Location = CALL, visit: int = 0) -> CompileEvent:
    return CompileEvent(index=index, function=function, defined_at=DEF if kind == USER else None, call_site=call,
                        number=number, kind=kind, visit=visit, traced=True, compiled=True, compile_s=compile_s,
                        causes=causes, same_key_as=same_key_as, effects=effects, nearest=(1,) if causes else ())


def record(*events: CompileEvent, wall_s: float = 10.0, exit_code: int = 0) -> RunRecord:
    return RunRecord(program="train.py", argv=(), exit_code=exit_code,
                     outcome="exited 0" if not exit_code else "raised ValueError", wall_s=wall_s,
                     events=events, functions=summarize(events))


def test_each_cause_becomes_its_finding_with_the_recompiles_cost_and_an_estimated_gain() -> None:
    static = [event(1, 1)] + [event(i, i, KeyDiff("lr (static): value", "0.1", f"0.0{i}")) for i in range(2, 6)]
    findings, below = diagnose(record(*static))
    (finding,) = findings
    assert finding.kind == RECOMPILE_STATIC and finding.count == 4 and below == 0
    assert finding.cost_s == pytest.approx(2.0) and finding.gain_s == pytest.approx(2.0)
    assert finding.gain == ESTIMATED and "lr" in finding.title and "static_argnames" in finding.change
    assert finding.location == DEF  # the jit's definition is what to change
    weak = diagnose(record(event(1, 1), event(2, 2, KeyDiff("x: weak_type", "True", "False"))))[0]
    assert [f.kind for f in weak] == [RECOMPILE_WEAK_TYPE] and weak[0].location == CALL
    loop = diagnose(record(event(1, 1), event(2, 2, KeyDiff("function: object", "#1", "#2"))))[0]
    assert [f.kind for f in loop] == [JIT_IN_LOOP] and "once, outside the loop" in loop[0].change
    dropped = diagnose(record(event(1, 1), event(2, 2, same_key_as=1)))[0]
    assert [f.kind for f in dropped] == [CACHE_DROPPED]


def test_equinox_static_numbers_get_the_wrappers_advice() -> None:
    events = (event(1, 1), CompileEvent(2, "step", DEF, CALL, 2, compiled=True, compile_s=0.5, via="equinox.filter_jit",
                                        causes=(KeyDiff("lr (static): value", "0.1", "0.2"),)))
    (finding,), _ = diagnose(record(*events))
    assert "jnp.asarray(lr)" in finding.change


def test_shapes_are_bucketed_and_the_gain_is_the_share_buckets_remove() -> None:
    shapes = [event(1, 1)] + [event(i, i, KeyDiff("batch: shape", "(3, 8)", f"({i + 2}, 8)")) for i in range(2, 11)]
    (finding,), _ = diagnose(record(*shapes))
    assert finding.kind == RECOMPILE_SHAPE and "10 shapes" in finding.title
    assert "3 compiles instead of 10" in finding.change  # 3..12 fall in the buckets 4, 8, 16
    assert finding.gain_s == pytest.approx(finding.cost_s * 7 / 9)


def test_ranked_by_cost_effects_last_and_small_ones_under_the_floor() -> None:
    print_effect = EffectRecord(EffectKind.PRINT, "print()", Location("train.py", 12, "step"))
    events = (event(1, 1, effects=(print_effect,)),
              event(2, 2, KeyDiff("function: object", "#1", "#2"), compile_s=0.3),
              event(3, 1, function="eval_step"),
              *(event(3 + i, 1 + i, KeyDiff("n (static): value", "1", str(i)), function="eval_step", compile_s=1.0)
                for i in range(1, 4)),
              event(9, 1, function="tiny"), event(10, 2, KeyDiff("x: shape", "(1,)", "(2,)"), function="tiny",
                                                  compile_s=0.01))
    findings, below = diagnose(record(*events))
    assert [f.kind for f in findings] == [RECOMPILE_STATIC, JIT_IN_LOOP, TRACE_EFFECT]
    assert findings[0].function == "eval_step" and below == 1  # tiny's 10 ms recompile is noise on a 10 s run


def test_eager_work_is_a_finding_only_when_a_line_repeats_it() -> None:
    start = [event(i, 1, function=op, kind=JAX_INTERNAL, call=Location("train.py", 3)) for i, op in
             enumerate(("broadcast_in_dim", "convert_element_type", "iota"), 1)]
    assert diagnose(record(*start))[0] == []  # the few jnp.ones every program starts with
    loop = [event(10 + i, i, function="sin", kind=JAX_INTERNAL, call=Location("train.py", 8)) for i in range(1, 7)]
    (finding,), _ = diagnose(record(*start, *loop))
    assert finding.kind == EAGER_OPS and finding.location == Location("train.py", 8) and "sin x6" in finding.title
    report = diagnose_record(record(*start, *loop))
    assert any("no jitted function ran" in note for note in report.notes)


def test_a_models_init_is_one_call_of_its_line_and_a_loop_is_many() -> None:
    """Schema 1.4's ``visit``: an init compiles _uniform for each layer's shape in one call of its line (no
    finding); a loop calls the same function from the line again and again (a finding, with the runs)."""
    init = Location("train.py", 3)
    layers = [event(i, i, function="_uniform", kind=JAX_INTERNAL, call=init, visit=1) for i in range(1, 7)]
    assert diagnose(record(*layers))[0] == []
    loop = Location("train.py", 8)
    calls = [event(10 + i, i, function="sin", kind=JAX_INTERNAL, call=loop, visit=i) for i in range(1, 7)]
    (finding,), _ = diagnose(record(*layers, *calls))
    assert finding.location == loop and finding.count == 6 and "over 6 runs of the line" in finding.evidence[0]


def test_a_first_compile_that_dominates_the_run_points_to_the_compile_time_section() -> None:
    (finding,), _ = diagnose(record(event(1, 1, compile_s=6.0), wall_s=10.0))
    assert finding.kind == SLOW_COMPILE and "jitscope trace train.py:step" in finding.change
    assert finding.gain_s == 0  # the first compile is needed: no gain is invented


def test_a_clean_run_and_a_failed_run_say_so() -> None:
    clean = diagnose_record(record(event(1, 1, compile_s=0.2)))
    assert clean.findings == () and clean.avoidable_share == 0
    failed = diagnose_record(record(event(1, 1), event(2, 2, KeyDiff("x: shape", "(1,)", "(2,)")), exit_code=1))
    assert failed.exit_code == 1 and failed.findings and "up to the failure" in failed.notes[0]


def test_the_gate() -> None:
    events = [event(1, 1)] + [event(i, i, KeyDiff("lr (static): value", "0.1", str(i))) for i in range(2, 6)]
    report = diagnose_record(record(*events, wall_s=10.0))  # 2 s avoidable of 10 s
    assert gate_failure(report, parse_fail_on("waste>10%")) == \
        "avoidable 20% of the run's 10 s is over --fail-on waste>10%"
    assert gate_failure(report, parse_fail_on("waste > 25 %")) is None
    assert gate_failure(report, parse_fail_on("waste>1500ms")) is not None
    assert gate_failure(report, parse_fail_on("waste>3s")) is None
    for bad in ("slow>10%", "waste>", "waste>inf%", "waste>150%", "waste>-1s", "waste>1e400s"):
        with pytest.raises(UsageError, match="--fail-on"):
            parse_fail_on(bad)


def test_a_static_flag_per_mode_is_design_and_a_ragged_last_batch_is_one_compile_to_drop() -> None:
    mode = record(event(1, 1), event(2, 2, KeyDiff("training (static): value", "(absent)", "False")))
    assert diagnose(mode)[0] == []  # train and eval: one program each is what static arguments are for
    named = record(event(1, 1), event(2, 2, KeyDiff("mode (static): value", "'train'", "'eval'")))
    assert diagnose(named)[0] == []
    ragged = record(event(1, 1), event(2, 2, KeyDiff("x: shape", "(64, 16)", "(8, 16)"),
                                       KeyDiff("y: shape", "(64,)", "(8,)")))
    (finding,), _ = diagnose(ragged)
    assert "2 shapes of x, y" in finding.title and "drop the ragged last batch" in finding.change
    assert finding.gain_s == finding.cost_s


def test_a_line_that_copies_to_the_host_every_step_is_a_sync_finding_and_a_final_read_is_not() -> None:
    loop, last = Location("train.py", 40, "<module>"), Location("train.py", 44, "<module>")
    run = replace(record(event(1, 1)), syncs=(SyncSite(loop, 500, 4.0, 1.5), SyncSite(last, 1, 0.5, 0.0)))
    (finding,), _ = diagnose(run)
    assert finding.kind == HOST_SYNC and finding.location == loop and finding.count == 500
    assert finding.cost_s == finding.gain_s == 1.5 and finding.gain == ESTIMATED
    assert "500 copies, 4 s waiting" in finding.evidence[0]
    on_cpu = replace(run, syncs=(SyncSite(loop, 500, 4.0, 1.5, "cpu"), SyncSite(last, 200, 1.0, 0.01, "cpu")))
    (finding,), _ = diagnose(on_cpu)  # the second is under the noise floor even on a GPU
    assert finding.location == loop and finding.gain == NOT_ESTIMATED and finding.cost_s == finding.gain_s == 0


def test_a_findings_calls_are_its_functions_not_another_of_the_same_name() -> None:
    from jitscope.doctor.measure import AbstractCall, Recorder, calls_for

    recorder = Recorder()
    here, there = Location("train.py", 10, "step"), Location("eval.py", 3, "step")
    mine, other = AbstractCall(len, (), {}, (), ()), AbstractCall(abs, (), {}, (), ())
    recorder.calls[("step", there)].append(other)
    recorder.calls[("step", here)].append(mine)
    finding = diagnose(record(event(1, 1), *[event(i, i, KeyDiff("lr (static): value", "0.1", f"0.0{i}"))
                                             for i in range(2, 5)]))[0][0]
    assert finding.location == DEF == here and calls_for(recorder, finding) == [mine]
    elsewhere = replace(finding, location=Location("train.py", 30))  # a call site: neither definition
    assert calls_for(recorder, elsewhere) is None  # two functions named step: not guessed
    del recorder.calls[("step", there)]
    assert calls_for(recorder, elsewhere) == [mine]
