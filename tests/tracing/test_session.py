from __future__ import annotations

from pathlib import Path

import pytest

from jitscope.load.specs import build_argset
from jitscope.load.target import load_targets
from jitscope.tracing.compile import lower_and_compile
from jitscope.tracing.session import trace_target

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _trace(target: str, shapes: str | None = None, statics: list[str] | None = None, **kw):
    (handle,) = load_targets(target, cwd=EXAMPLES)
    argset = build_argset(shapes, statics) if shapes is not None or statics else handle.examples[0]
    return trace_target(handle, argset, **kw)


def test_seed_peek_what_the_function_saw():
    result = _trace("tracing_peek.py:f", watch_effects=False)
    rec = result.record
    assert [(a.path, a.kind, a.type_name, a.aval) for a in rec.seen] == [
        ("x", "traced", "DynamicJaxprTracer", "f32[2]"),
        ("y", "traced", "DynamicJaxprTracer", "f32[2]"),
    ]
    assert rec.body_runs == 1
    assert "type(x): <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'>" in rec.printed
    assert rec.summary is not None
    assert dict(rec.summary.primitive_counts) == {"add": 2, "dot_general": 1}
    assert rec.diagnostic is None


def test_static_and_weak_typed_values_are_described():
    rec = _trace("static_args.py:jitted_where", "f32[3]", ["threshold=2.5"], watch_effects=False).record
    assert [(a.path, a.kind, a.aval if a.kind == "traced" else a.value_repr) for a in rec.seen] == [
        ("x", "traced", "f32[3]"),
        ("threshold", "static", "2.5"),
    ]
    weak = _trace("static_args.py:conditional_double", "f32[], 1.0", watch_effects=False).record
    assert weak.seen[1].weak_type and weak.seen[1].aval == "~f32[]"


def test_pytree_paths():
    rec = _trace("mlp.py:predict", watch_effects=False).record
    paths = [a.path for a in rec.seen]
    assert paths[0] == "params['layer0']['b']" and paths[-1] == "x"


def test_huge_abstract_inputs_trace_without_allocating():
    import jax

    before = sum(d.memory_stats()["bytes_in_use"] for d in jax.devices() if d.memory_stats())  \
        if jax.devices()[0].memory_stats() else None
    rec = _trace("jit_sin.py:fsin", "f32[50000,50000]", watch_effects=False).record  # 10 GB if allocated
    assert rec.diagnostic is None and str(rec.jaxpr.invars[0].aval) == "f32[50000,50000]"
    if before is not None:
        after = sum(d.memory_stats()["bytes_in_use"] for d in jax.devices())
        assert after - before < 1 << 20


def test_unmarked_python_if_is_diagnosed_at_the_user_line():
    rec = _trace("static_args.py:conditional_double", "f32[], 0.0", watch_effects=False).record
    diag = rec.diagnostic
    assert diag is not None and diag.kind == "bool_conversion"
    assert diag.location.file.endswith("static_args.py")
    assert diag.source_line.strip() == "if x > threshold:"
    assert "`x` is traced data: use jnp.where" in diag.fix and "--static threshold=0.0" in diag.fix
    assert "--static x" not in diag.fix


def test_static_threshold_still_fails_because_x_is_traced():
    rec = _trace("static_args.py:jitted_conditional_double_nums", watch_effects=False).record
    assert rec.diagnostic is not None
    assert "`x` is traced data" in rec.diagnostic.fix and "threshold" not in rec.diagnostic.fix


def test_unhashable_static_and_shape_errors():
    rec = _trace("static_args.py:jitted_where", "f32[2]", ["threshold=[1, 2]"], watch_effects=False).record
    assert rec.diagnostic.kind == "unhashable_static" and "tuple" in rec.diagnostic.fix
    rec = _trace("tracing_peek.py:f", "f32[2], f32[3]", watch_effects=False).record
    assert rec.diagnostic.kind == "shape"
    assert rec.diagnostic.source_line.strip() == "return jnp.dot(x + 1, y + 1)"


@pytest.mark.parametrize(
    ("stages", "has"),
    [
        (("jaxpr",), set()),
        (("stablehlo",), {"stablehlo"}),
        (("hlo", "cost", "memory"), {"hlo", "cost", "memory"}),
    ],
)
def test_stages_stop_early(stages, has):
    result = _trace("tracing_peek.py:f", watch_effects=False)
    st = lower_and_compile(result.traced, stages)
    present = {name for name in ("stablehlo", "hlo", "cost", "memory") if getattr(st, name) is not None}
    assert present == has
    assert (st.compile_seconds is not None) == bool(has & {"hlo", "cost", "memory"})


def test_cost_and_memory_analysis_on_cpu():
    result = _trace("tracing_peek.py:f", watch_effects=False)
    st = lower_and_compile(result.traced, ("hlo", "cost", "memory"))
    assert st.cost.flops is not None and st.cost.flops > 0
    assert st.memory.argument_bytes == 16  # two f32[2]
    assert "FileNames" not in st.hlo and "ENTRY" in st.hlo


def test_user_jit_options_are_honoured():
    rec = _trace("mlp.py:train_step", watch_effects=False).record
    assert rec.summary.n_eqns_total > 20
    assert rec.static_argnames == ("learning_rate",) and rec.donate_argnums == (0,)


def test_closed_over_constants_have_origins():
    (handle,) = load_targets("consts.py:affine", cwd=EXAMPLES.parent / "tests" / "targets")
    rec = trace_target(handle, handle.examples[0], watch_effects=False).record
    origins = sorted(c.origin for c in rec.summary.constants)
    assert origins == [
        "closure variable `bias` of affine (consts.py:9)",
        "global `W` in module consts",
    ]
    assert rec.summary.const_bytes == 64 * 64 * 4 + 64 * 4
