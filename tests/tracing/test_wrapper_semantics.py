"""A wrapper's semantics on every path: equinox.filter_jit makes a Python-float lr static, so a new value is a
recompile, not a cache hit, through JITSCOPE_EXAMPLES, --shapes, the API and lint --trace, as ``--from-run``
and JAX itself say; nnx.jit and jax.jit trace the same float, and a new value is a cache hit there."""

from __future__ import annotations

import pytest

pytest.importorskip("equinox")
pytest.importorskip("flax")

from jitscope.api.commands.lint_trace import dynamic_findings  # noqa: E402
from jitscope.api.commands.trace import run_trace  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

WRAPPERS = ROOT / "tests" / "targets" / "wrappers"
TARGET = str(WRAPPERS / "eqx_lr.py")


def _hits(report):
    return [(r.call_index, r.cache_hit_of) for r in report.traces]


def test_examples_call_sequence_recompiles_for_a_new_lr() -> None:
    report, _ = run_trace([f"{TARGET}:step"], None, None, None, ("jaxpr",), watch_effects=False)
    assert _hits(report) == [(1, None), (2, None)]  # call 2 compiles again: lr is static under filter_jit
    seen = {a.path: a.kind for a in report.traces[1].seen}
    assert seen["lr"] == "static" and seen["x"] == "traced"


def test_shapes_recompile_for_a_new_lr_and_not_for_the_same() -> None:
    shapes = ["{'w': f32[4,2]}, f32[8,4], 0.01", "{'w': f32[4,2]}, f32[8,4], 0.001",
              "{'w': f32[4,2]}, f32[8,4], 0.001"]
    report, _ = run_trace([f"{TARGET}:sgd"], shapes, None, None, ("jaxpr",), watch_effects=False)
    assert _hits(report) == [(1, None), (2, None), (3, 2)]


def test_api_keeps_filter_jit_semantics() -> None:
    import jax
    import jax.numpy as jnp

    import jitscope
    from tests.targets.wrappers import eqx_lr

    result = jitscope.trace(eqx_lr.sgd, shapes=["{'w': f32[4,2]}, f32[8,4], 0.01", "{'w': f32[4,2]}, f32[8,4], 0.001"],
                            stages="jaxpr", effects=False)
    assert [c.record.cache_hit_of for c in result.calls] == [None, None]
    live = jitscope.trace(eqx_lr.step, eqx_lr.model, jax.ShapeDtypeStruct((8, 4), jnp.float32), 1e-2,
                          stages="jaxpr", effects=False)
    assert {a.path: a.kind for a in live.calls[0].record.seen}["lr"] == "static"


def test_lint_trace_reports_the_recompile_with_its_cause() -> None:
    findings = [f for f in dynamic_findings([f"{TARGET}:step"], None, None, None) if f.code == "JS306"]
    assert len(findings) == 1
    assert "lr (static): value 0.01 -> 0.001" in findings[0].message and "confirmed" in findings[0].message


def test_nnx_jit_and_jax_jit_trace_the_float_a_new_value_is_a_cache_hit() -> None:
    report, _ = run_trace([f"{TARGET}:nnx_step"], None, None, None, ("jaxpr",), watch_effects=False)
    assert _hits(report) == [(1, None), (2, 1)]
    shapes = ["{'w': f32[4,2]}, f32[8,4], 0.01", "{'w': f32[4,2]}, f32[8,4], 0.001"]
    report, _ = run_trace([f"{TARGET}:jax_step"], shapes, None, None, ("jaxpr",), watch_effects=False)
    assert _hits(report) == [(1, None), (2, 1)]


def test_jax_agrees_equinox_compiles_once_per_lr() -> None:
    """The oracle: the user's own loop, counted by JAX's cache, compiles as the sequence above predicts."""
    from tests.targets.wrappers import eqx_lr

    eqx_lr.schedule((1e-2, 1e-3, 1e-3))
    assert eqx_lr.step._cached._cache_size() == 2
