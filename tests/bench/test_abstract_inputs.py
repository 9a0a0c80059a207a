"""Abstract arguments where a concrete value is needed: bench and profile make one, as for ``--shapes``.

``jax.eval_shape`` makes a model or train state whose leaves are ``jax.ShapeDtypeStruct``; trace and memory
take it as it is, and bench and profile (CLI and API) give every abstract leaf values, at any depth of any
registered pytree (issue 29, item 2).
"""

from __future__ import annotations

import json
import sys
import warnings

import pytest

from jitscope.errors import ResourceError, UsageError
from jitscope.load.specs import ArgSet
from tests.conftest import ROOT, run_cli

jax = pytest.importorskip("jax")
jnp = jax.numpy

MODELS = ROOT / "tests" / "targets" / "models"


class _Holder:
    """A registered pytree node that is no container jitscope knows: JAX's tree walk must reach its leaves."""

    def __init__(self, w, b):
        self.w, self.b = w, b


jax.tree_util.register_pytree_node(_Holder, lambda h: ((h.w, h.b), None), lambda _, kids: _Holder(*kids))


def test_make_inputs_gives_values_to_abstract_leaves_inside_any_pytree():
    from jitscope.timing.inputs import make_inputs

    holder = _Holder(jax.ShapeDtypeStruct((3, 2), jnp.float32), {"b": jax.ShapeDtypeStruct((2,), jnp.int32)})
    args, _ = make_inputs(ArgSet((holder, jax.ShapeDtypeStruct((4,), jnp.bfloat16))), seed=0)
    made, top = args
    assert isinstance(made, _Holder) and isinstance(made.w, jax.Array) and isinstance(made.b["b"], jax.Array)
    assert (made.w.shape, made.w.dtype, made.b["b"].dtype) == ((3, 2), jnp.float32, jnp.int32)
    assert isinstance(top, jax.Array) and top.dtype == jnp.bfloat16


def test_the_memory_check_counts_abstract_leaves_inside_objects():
    from jitscope.timing.inputs import check_fits

    big = ArgSet((_Holder(jax.ShapeDtypeStruct((1024, 1024), jnp.float32), None),))
    with pytest.raises(ResourceError, match="4 MiB"):
        check_fits(big, host_available=4 * 2**20, device_free=None, on_cpu=True)


def test_cold_process_sends_arguments_pickle_cannot_copy_as_the_examples_number():
    import pickle

    from jitscope.timing.process import ProcessRequest, _sendable

    example = ArgSet((lambda: None,))  # a closure: pickle cannot copy it
    request = ProcessRequest("m.py:f", ".", example, 0, "off", False, "r.json")
    sent = pickle.loads(_sendable(request, (ArgSet(), example)))
    assert sent.argset is None and sent.example == 1
    with pytest.raises(UsageError, match="--cold-process cannot copy the arguments of m.py:f"):
        _sendable(request, (ArgSet((lambda: None,)),))  # equal-looking, but not the target's own example


@pytest.mark.models
def test_the_cold_process_makes_the_example_it_is_sent_the_number_of(tmp_path):
    """A TrainState holds optax's closures, which pickle cannot copy: the new process loads the module and makes
    example 0 again (``_child`` is what ``python -m jitscope.timing.process`` runs)."""
    for module in ("flax", "equinox", "optax"):
        pytest.importorskip(module)
    from jitscope.timing.process import ProcessRequest, _child

    target = f"{MODELS / 'abstract_state.py'}:linen_step"
    result = _child(ProcessRequest(target, str(tmp_path), None, 0, "off", False, str(tmp_path / "r.json"), 0))
    assert result["first_call"]["total"] > 0


def test_api_bench_and_profile_take_an_abstract_pytree():
    import jitscope

    @jax.jit
    def step(holder, x):
        return jnp.tanh(x @ holder.w).sum() + holder.b["b"].sum()

    holder = _Holder(jax.ShapeDtypeStruct((8, 4), jnp.float32), {"b": jax.ShapeDtypeStruct((4,), jnp.float32)})
    x = jax.ShapeDtypeStruct((16, 8), jnp.float32)
    assert jitscope.bench(step, holder, x, budget=0.02, min_rounds=3).cached.median_s > 0
    profiled = jitscope.profile(step, holder, x, calls=2, budget=0.02)
    assert profiled.lines and profiled.record.failures == ()


def test_profile_and_memory_lines_of_a_failed_call_raise_its_error():
    import jitscope

    @jax.jit
    def wrong(x):
        return x @ jnp.ones((3, 3))

    result = jitscope.profile(wrong, jnp.ones(4), calls=2, budget=0.02)
    with pytest.raises(UsageError, match="no profile: .*dot_general") as raised:
        result.lines  # noqa: B018 - the property is what is tested
    assert raised.value.hint and "check --shapes" in raised.value.hint
    memory = jitscope.memory(wrong, jnp.ones(4))
    for name in ("lines", "buffers"):
        with pytest.raises(UsageError, match="no memory analysis: .*dot_general"):
            getattr(memory, name)


def test_profile_lines_with_no_source_line_warn_why():
    import jitscope

    @jax.jit
    def same(x):
        return x

    result = jitscope.profile(same, jnp.ones(4), calls=2, budget=0.02)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert result.lines == ()
    assert len(caught) == 1 and "no device time was attributed to a source line" in str(caught[0].message)
    assert result.summary().endswith("no device time on a source line")


def test_an_abstract_leaf_jitscope_cannot_reach_gets_its_own_hint():
    from jitscope.jaxcompat.jit import JitOptions
    from jitscope.tracing.diagnose import diagnose

    try:
        jax.jit(lambda x: x + 1)(jax.ShapeDtypeStruct((2,), jnp.float32))
    except TypeError as exc:
        fix = diagnose(exc, JitOptions()).fix
    assert "jax.ShapeDtypeStruct" in fix and "--shapes" not in fix


@pytest.mark.models
def test_cli_bench_and_profile_on_an_eval_shaped_train_state_and_equinox_module():
    for module in ("flax", "equinox", "optax"):
        pytest.importorskip(module)
    target = str(MODELS / "abstract_state.py")
    bench = run_cli("bench", f"{target}:linen_step", "--budget", "0.02", "--min-rounds", "3", "--format", "json")
    assert bench.returncode == 0, bench.stderr
    (row,) = json.loads(bench.stdout)["rows"]
    assert row["call"].startswith("TrainState(")
    assert row["input_bytes"] == 4 * (8 * 16 + 8 * 4) + 8 + 4 * (3 * (16 * 32 + 32 + 32 * 4 + 4) + 1) + 4  # + step
    profile = run_cli("profile", f"{target}:eqx_step", "--calls", "2", "--budget", "0.02", "--format", "json")
    assert profile.returncode == 0, profile.stderr
    (row,) = json.loads(profile.stdout)["rows"]
    assert row["call"].startswith("Net(") and row["lines"]


@pytest.mark.models
def test_api_profile_on_an_eval_shaped_train_state_and_equinox_module():
    for module in ("flax", "equinox", "optax"):
        pytest.importorskip(module)
    import jitscope

    sys.path.insert(0, str(MODELS))
    try:
        import abstract_state as m
    finally:
        sys.path.remove(str(MODELS))
    x, y = jax.ShapeDtypeStruct((8, 16), jnp.float32), jax.ShapeDtypeStruct((8, 4), jnp.float32)
    key = jax.ShapeDtypeStruct((2,), jnp.uint32)
    for fn, args in ((m.linen_step, (m.state, x, y, key)), (m.eqx_step, (m.net, x, y))):
        result = jitscope.profile(fn, *args, calls=2, budget=0.02)
        assert result.lines, result.render("text")
        assert any(line.location.file.endswith("abstract_state.py") for line in result.lines)


def test_an_abstract_state_holding_a_typed_key_gets_a_real_key():
    """Items 1 and 2 together: jax.eval_shape of a state with a jax.random.key leaf (dtype key<fry>) is given a
    real key array for bench, as a float leaf gets values."""
    import jitscope

    def init():  # type: ignore[no-untyped-def]
        return {"w": jnp.ones((4, 4)), "key": jax.random.key(0)}

    @jax.jit
    def step(state, x):  # type: ignore[no-untyped-def]
        noise = jax.random.normal(state["key"], x.shape)
        return {"w": state["w"] * 0.9, "key": jax.random.split(state["key"])[0]}, (x @ state["w"] + noise).sum()

    abstract = jax.eval_shape(init)
    assert str(abstract["key"].dtype) == "key<fry>"
    result = jitscope.bench(step, abstract, jax.ShapeDtypeStruct((2, 4), jnp.float32), budget=0.02, min_rounds=3)
    assert result.cached.median_s > 0
    assert result.rows[0].call.startswith("{'key': key<fry>[], 'w': f32[4,4]}")
