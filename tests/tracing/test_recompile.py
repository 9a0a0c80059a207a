from __future__ import annotations

from pathlib import Path

from jitscope.load.specs import ArgSet, build_argset
from jitscope.load.target import load_targets
from jitscope.tracing.recompile import analyse_sequence, observe_sequence

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _calls(*argsets: ArgSet, params=("x", "threshold"), statics=("threshold",)):
    return analyse_sequence("t", argsets, list(params), statics).calls


def test_seed_sequence_compiles_once_per_static_value():
    (target,) = load_targets("static_args.py:jitted_where", cwd=EXAMPLES)
    calls = analyse_sequence(target.name, target.examples, ["x", "threshold"], target.options.static_argnames).calls
    assert [c.compiles for c in calls] == [True, False, True, False]
    assert calls[2].nearest == 1
    assert [str(d) for d in calls[2].diffs] == ["threshold (static): value 0.0 -> 10.0"]
    assert observe_sequence(target, target.examples) == [True, False, True, False]


def test_every_differing_component_is_reported_not_just_one():
    a = build_argset("f32[8]", ["threshold=1"])
    b = build_argset("f16[4]", ["threshold=2"])
    (_, second) = _calls(a, b)
    assert {d.component for d in second.diffs} == {"x: shape", "x: dtype", "threshold (static): value"}


def test_nearest_previous_compile_is_the_one_with_fewest_differences():
    calls = _calls(
        build_argset("f32[8]", ["threshold=1"]),
        build_argset("f16[4]", ["threshold=1"]),
        build_argset("f16[4]", ["threshold=2"]),
    )
    assert calls[2].nearest == 2 and len(calls[2].diffs) == 1


def test_python_scalar_vs_array_and_keyword_vs_positional():
    calls = _calls(
        build_argset("2.0", ["threshold=1"]),
        build_argset("f32[]", ["threshold=1"]),
        ArgSet(args=(), kwargs={"x": 2.0, "threshold": 1}, static_names=("threshold",)),
        params=("x", "threshold"),
    )
    # A Python float is a weak-typed f32[]; a strongly typed f32[] array is a new key.
    assert [str(d) for d in calls[1].diffs] == ["x: weak_type True -> False"]
    # Passing x by keyword instead of by position is a different signature: JAX recompiles.
    assert calls[2].compiles and [str(d) for d in calls[2].diffs] == ["x: passed positionally -> by keyword"]


def test_pytree_structure_change_hides_leaf_noise():
    calls = _calls(build_argset("{'a': f32[2]}"), build_argset("{'a': f32[2], 'b': f32[2]}"),
                   params=("x",), statics=())
    assert [d.component for d in calls[1].diffs] == ["x: pytree structure"]
