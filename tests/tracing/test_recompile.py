from __future__ import annotations

from pathlib import Path

from jitscope.load.specs import ArgSet, ArraySpec, build_argset
from jitscope.load.target import load_targets
from jitscope.run.sequence import observe_sequence
from jitscope.tracing.cachekeys import StaticValues
from jitscope.tracing.recompile import analyse_sequence, cache_hits
from tests.targets.static_objects import ComparedByIdentity, EqualByValue

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




def _static_calls(*values):
    return _calls(*(ArgSet(args=(ArraySpec((2,), "float32"),), kwargs={"threshold": v}, static_names=("threshold",))
                    for v in values))


def test_equal_static_objects_share_a_key_whatever_their_repr():
    assert [c.compiles for c in _static_calls(EqualByValue(1), EqualByValue(1), EqualByValue(2))] == [True, False, True]


def test_a_new_identity_compared_static_object_recompiles_and_is_named():
    one = ComparedByIdentity()
    calls = _static_calls(one, ComparedByIdentity(), one)
    assert [c.compiles for c in calls] == [True, True, False]
    assert [str(d) for d in calls[1].diffs] == [
        ("threshold (static): value: a new object of class ComparedByIdentity with identity equality on every call: "
        "give it __eq__/__hash__ or reuse one instance")
    ]


class _EqualDefaultRepr:
    """Equal by value; the default repr names the address, different for every instance."""

    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return type(other) is _EqualDefaultRepr and other.n == self.n

    def __hash__(self):
        return hash(self.n)


def test_static_values_follow_jax_strict_type_and_equality():
    values = StaticValues()
    assert values.text(_EqualDefaultRepr(1)) == values.text(_EqualDefaultRepr(1)) == "<_EqualDefaultRepr #1>"
    assert values.text(_EqualDefaultRepr(2)) == "<_EqualDefaultRepr #2>"
    assert values.text((1, 2)) == values.text((1.0, 2))  # equal tuples: one key, whatever the repr
    assert values.text(1) != values.text(1.0) != values.text(True)  # types must match exactly
    assert values.text(float("nan")) != values.text(float("nan"))  # nan != nan: every call recompiles
    assert values.text([1]) == "<unhashable list>"
    long_a, long_b = "a" * 200 + "x", "a" * 200 + "y"
    assert values.text(long_a) != values.text(long_b)  # shortened alike, still told apart


def test_float64_numpy_input_is_float32_for_jax_without_x64():
    f64, f32 = ArgSet(args=(ArraySpec((2,), "float64"),)), ArgSet(args=(ArraySpec((2,), "float32"),))
    narrow = analyse_sequence("t", (f64, f32), ["x"], (), x64=False).calls
    assert [c.compiles for c in narrow] == [True, False]
    wide = analyse_sequence("t", (f64, f32), ["x"], (), x64=True).calls
    assert [str(d) for d in wide[1].diffs] == ["x: dtype f64 -> f32"]


def test_none_then_array_is_a_pytree_structure_change():
    calls = _calls(ArgSet(args=(ArraySpec((2,), "float32"), None)),
                   ArgSet(args=(ArraySpec((2,), "float32"), ArraySpec((2,), "float32"))), params=("x", "y"), statics=())
    assert [str(d) for d in calls[1].diffs] == ["y: pytree structure None -> *"]


def test_observed_runs_agree_with_the_static_value_model(tmp_path):
    (tmp_path / "statics.py").write_text(
        "import functools, jax\n\n\n@functools.partial(jax.jit, static_argnames='threshold')\n"
        "def f(x, threshold):\n    return x * 2\n"
    )
    (target,) = load_targets("statics.py:f", cwd=tmp_path)
    one = ComparedByIdentity()
    argsets = tuple(ArgSet(args=(ArraySpec((2,), "float32"),), kwargs={"threshold": v}, static_names=("threshold",))
                    for v in (EqualByValue(1), EqualByValue(1), one, ComparedByIdentity(), one))
    assert observe_sequence(target, argsets) == [True, False, True, True, False]
    assert [not hit for hit in cache_hits(target, argsets)] == [True, False, True, True, False]
