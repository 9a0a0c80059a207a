"""Wrappers built on jax.jit: each compile is reported under the user's function, with the user's causes.

In-process, on one device (pmap and shard_map over a mesh of one). equinox and flax are
optional: their tests skip, saying how to install them, when the library is absent.
"""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jitscope.jaxcompat.compile_hooks import installed
from jitscope.model.run import USER
from jitscope.run.causes import describe_causes
from jitscope.run.observer import RunObserver

HERE = __file__.rsplit("/", 1)[-1]


def _observe(body):
    observer = RunObserver(effects=False)
    with installed(observer):
        body()
    return observer.finish()


def _mine(events):
    return [e for e in events if e.kind == USER]


def _causes(event):
    return [str(c) for c in event.causes]


def _assert_defined_here(event, fun):
    assert event.defined_at is not None
    code = inspect.unwrap(fun).__code__
    assert event.defined_at.file.endswith(HERE) and event.defined_at.line == code.co_firstlineno


def test_pmap_is_named_after_the_user_function_with_its_static_argument():
    def scaled(x, factor):
        return x * factor

    def body():
        # built under the hooks, as in `jitscope run` (installed when the program imports jax):
        # JAX 0.6 binds _prepare_pmap into each pmap when the pmap is built
        pm = jax.pmap(scaled, static_broadcasted_argnums=1)
        pm(jnp.ones((1, 3)), 2)
        pm(jnp.ones((1, 3)), 2)  # cached
        pm(jnp.ones((1, 4)), 2)
        pm(jnp.ones((1, 4)), 3)

    events = _mine(_observe(body))
    assert [e.function.rsplit(".", 1)[-1] for e in events] == ["scaled"] * 3
    assert [e.number for e in events] == [1, 2, 3]
    assert all(e.via == "jax.pmap" for e in events)
    _assert_defined_here(events[0], scaled)
    assert events[0].signature == "x: f32[1,3], factor=2"
    assert _causes(events[1]) == ["x: shape (1, 3) -> (1, 4)"]
    assert _causes(events[2]) == ["factor (static): value 2 -> 3"]


def test_a_pmap_trace_is_watched_for_side_effects():
    def noisy(x):
        print("tracing noisy")
        return x + 1

    def body():
        pm = jax.pmap(noisy)
        pm(jnp.ones((1, 2)))
        pm(jnp.ones((1, 2)))  # cached: no trace, no effect

    observer = RunObserver(effects=True)
    with installed(observer):
        body()
    events = _mine(observer.finish())
    assert [e.function.rsplit(".", 1)[-1] for e in events] == ["noisy"]
    assert events[0].traced and [e.detail for e in events[0].effects] == ["print()"]


def test_shard_map_inside_jit_is_the_jitted_function():
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    try:
        from jax import shard_map
    except ImportError:  # JAX < 0.7
        from jax.experimental.shard_map import shard_map

    mesh = Mesh(np.array(jax.devices()[:1]), ("i",))

    def local(x):
        return x * 3

    @jax.jit
    def sharded(x):
        return shard_map(local, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)

    def body():
        sharded(jnp.ones(4))
        sharded(jnp.ones(4))
        sharded(jnp.ones(6))

    events = _mine(_observe(body))
    assert [e.function.rsplit(".", 1)[-1] for e in events] == ["sharded", "sharded"]
    assert _causes(events[1]) == ["x: shape (4,) -> (6,)"]


def test_equinox_filter_jit_holds_a_python_int_static_and_says_so():
    eqx = pytest.importorskip("equinox", reason="equinox is not installed (pip install -e '.[test]')")

    def step(x, n):
        return x * n

    jitted = eqx.filter_jit(step)

    def body():
        for n in range(3):
            jitted(jnp.ones(3), n)
        jitted(jnp.ones(3), 2)  # cached
        jitted(jnp.ones(5), 2)

    events = _mine(_observe(body))
    assert [e.number for e in events] == [1, 2, 3, 4]
    assert all(e.function.endswith("step") and e.via == "equinox.filter_jit" for e in events)
    _assert_defined_here(events[0], step)
    assert events[0].signature == "x: f32[3], n=0"
    assert _causes(events[1]) == ["n (static): value 0 -> 1"]
    assert "filter_jit holds every non-array argument static" in describe_causes(events[1])
    assert _causes(events[3]) == ["x: shape (3,) -> (5,)"]


def test_equinox_filter_jit_of_a_module_method():
    eqx = pytest.importorskip("equinox", reason="equinox is not installed (pip install -e '.[test]')")

    class Scale(eqx.Module):
        w: jax.Array

        @eqx.filter_jit
        def __call__(self, x):
            return self.w * x

    def body():
        model = Scale(jnp.ones(3))
        model(jnp.ones(3))
        model(jnp.ones(3))  # cached
        Scale(jnp.ones(4))(jnp.ones(4))

    events = _mine(_observe(body))
    assert [e.function.rsplit(".", 1)[-1] for e in events] == ["__call__", "__call__"]
    assert events[0].function.endswith("Scale.__call__") and events[0].via == "equinox.filter_jit"
    assert _causes(events[1]) == ["self.w: shape (3,) -> (4,)", "x: shape (3,) -> (4,)"]


@pytest.mark.models
def test_flax_nnx_jit():
    nnx = pytest.importorskip("flax.nnx", reason="flax is not installed (pip install -e '.[test-models]')")

    class Linear(nnx.Module):
        def __init__(self):
            self.w = nnx.Param(jnp.ones((3, 2)))

        def __call__(self, x):
            return x @ self.w

    @nnx.jit
    def forward(model, x):
        return model(x).sum()

    def body():
        model = Linear()
        forward(model, jnp.ones((4, 3)))
        forward(model, jnp.ones((4, 3)))  # cached
        forward(model, jnp.ones((5, 3)))

    events = _mine(_observe(body))
    assert [e.function.rsplit(".", 1)[-1] for e in events] == ["forward", "forward"]
    _assert_defined_here(events[0], forward)
    assert _causes(events[1]) == ["x: shape (4, 3) -> (5, 3)"]


@pytest.mark.models
def test_flax_linen_jit_is_the_module_method_and_library_jits_are_not_the_users():
    nn = pytest.importorskip("flax.linen", reason="flax is not installed (pip install -e '.[test-models]')")

    class Dense(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(2)(x)

    jit_dense = nn.jit(Dense)

    class Outer(nn.Module):
        @nn.compact
        def __call__(self, x):
            return jit_dense()(x)

    def body():
        model = Outer()
        params = model.init(jax.random.PRNGKey(0), jnp.ones((4, 3)))
        model.apply(params, jnp.ones((4, 3)))
        model.apply(params, jnp.ones((4, 3)))
        model.apply(params, jnp.ones((5, 3)))

    events = _observe(body)
    mine = _mine(events)
    assert {e.function.rsplit(".", 1)[-1] for e in mine} == {"__call__"}
    assert all(e.function.endswith("Dense.__call__") and e.via == "flax.linen.jit" for e in mine)
    _assert_defined_here(mine[0], Dense.__call__)
    assert _causes(mine[-1]) == ["x: shape (4, 3) -> (5, 3)"]
    # flax's own eval_shape checks (jitted lambdas in flax, called by flax) are not the user's jits
    assert all("flax" not in str(e.defined_at) for e in mine)


@pytest.mark.models
def test_flax_linen_jit_as_a_method_decorator_is_the_method():
    nn = pytest.importorskip("flax.linen", reason="flax is not installed (pip install -e '.[test-models]')")

    class Dense(nn.Module):
        @nn.jit
        @nn.compact
        def __call__(self, x):
            return nn.Dense(2)(x)

    def body():
        model = Dense()
        params = model.init(jax.random.PRNGKey(0), jnp.ones((4, 3)))
        model.apply(params, jnp.ones((4, 3)))
        model.apply(params, jnp.ones((5, 3)))

    events = _observe(body)
    assert not [e for e in events if "core_fn" in e.function]
    mine = _mine(events)
    assert mine and all(e.function.endswith("Dense.__call__") and e.via == "flax.linen.jit" for e in mine)
    assert _causes(mine[-1]) == ["x: shape (4, 3) -> (5, 3)"]
