"""bench times the call the user makes: a library wrapper's own call (equinox.filter_jit), with the compiled
program alone beside it, and lists the values the wrapper makes static (a Python-float lr)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from jitscope.load.target import load_targets
from jitscope.model.common import from_jsonable, to_jsonable
from jitscope.timing.runner import BenchOptions, bench_calls
from jitscope.timing.stats import summarize
from tests.bench.test_bench_render import render_bench, text_of
from tests.conftest import ROOT

eqx = pytest.importorskip("equinox")

TARGET = str(ROOT / "tests" / "targets" / "wrappers" / "eqx_lr.py")
FAST = BenchOptions(budget=0.02, min_rounds=3, max_warmup=0.01)


def test_the_timed_loop_calls_the_users_filter_jit_wrapper_and_statics_list_its_lr(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from equinox._jit import _JitWrapper

    (target,) = load_targets(f"{TARGET}:step")
    calls = {"n": 0}
    original = _JitWrapper.__call__

    def counted(self, *args, **kwargs):
        calls["n"] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(_JitWrapper, "__call__", counted)
    report = bench_calls([(target, argset) for argset in target.examples],
                         dataclasses.replace(FAST, dispatch=False)).report
    timed = sum(row.cached.blocked.rounds * row.cached.blocked.loops + row.cached.warmup_calls for row in report.rows)
    # every timed call (and the warm-up's) went through the wrapper the user calls, not a jit of its inside
    assert calls["n"] >= timed
    for row in report.rows:
        assert row.cached.called == "equinox.filter_jit" and row.cached.compiled is not None
        assert row.cached.wrapper_overhead is not None  # measured in pairs of rounds: wrapper, program alone
    # the lr the wrapper makes static is among the statics, one value per row
    assert [row.statics for row in report.rows] == [{"lr": "0.01"}, {"lr": "0.001"}]


def test_a_donating_filter_jit_is_timed_with_fresh_copies_of_what_it_donates() -> None:
    (target,) = load_targets(f"{TARGET}:donating_step")
    (row,) = bench_calls([(target, target.examples[0])], FAST).report.rows
    assert row.cached.called == "equinox.filter_jit" and row.cached.fresh_inputs
    assert target.options.donate_argnums == (0, 1, 2)


def test_a_jax_jit_call_is_timed_as_before_without_a_second_figure() -> None:
    (target,) = load_targets(f"{TARGET}:jax_step")
    from jitscope.load.specs import build_argset

    (row,) = bench_calls([(target, build_argset("{'w': f32[4,2]}, f32[8,4], 0.01"))], FAST).report.rows
    assert row.cached.called == "" and row.cached.compiled is None and row.statics == {}
    assert "called" not in json.dumps(to_jsonable(row.cached))  # 1.1 documents' fields, byte for byte


def test_the_wrappers_own_work_is_reported_when_large(make_row, make_report) -> None:
    base = make_row("eqx_lr.py:step", "Linear, f32[8,4], 0.01", median=250e-6)
    program = summarize([150e-6] * 3, loops=10)
    large = dataclasses.replace(base, cached=dataclasses.replace(base.cached, called="equinox.filter_jit",
                                                                 compiled=program, wrapper_overhead=100e-6))
    text = " ".join(text_of(render_bench(make_report(large))).split())
    assert ("step(Linear, f32[8,4], 0.01): times your equinox.filter_jit call; the compiled program alone takes "
            "150 µs, and the wrapper's own work adds 100 µs per call (67% of the program's time)") in text
    small = dataclasses.replace(large, cached=dataclasses.replace(large.cached, wrapper_overhead=1e-6,
                                                                  compiled=summarize([249e-6] * 3, loops=10)))
    assert "own work adds" not in text_of(render_bench(make_report(small)))  # 1 µs: under both thresholds
    again = from_jsonable(type(large.cached), json.loads(json.dumps(to_jsonable(large.cached))))
    assert again.compiled.median == pytest.approx(150e-6) and again.called == "equinox.filter_jit"
    assert again.wrapper_overhead == pytest.approx(100e-6)


def test_paired_rounds_alternate_which_call_goes_first() -> None:
    from jitscope.timing.clock import FakeClock
    from jitscope.timing.loops import paired_rounds

    clock = FakeClock()
    order: list[str] = []

    def timer(name: str, seconds: float):
        def time_round(loops: int) -> float:
            order.append(name)
            clock.advance(seconds * loops)
            return seconds * loops
        return time_round

    ones, twos, spent = paired_rounds(timer("wrapper", 3e-6), timer("program", 1e-6), 10, budget=0.0, min_rounds=4,
                                      clock=clock)
    assert order == ["wrapper", "program", "program", "wrapper"] * 2
    assert ones == [pytest.approx(3e-6)] * 4 and twos == [pytest.approx(1e-6)] * 4
    assert spent == pytest.approx(4 * 40e-6)
