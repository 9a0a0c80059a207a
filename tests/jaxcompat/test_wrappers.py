"""One place knows every jit wrapper's rules: which leaves each makes static, which it traces."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

eqx = pytest.importorskip("equinox")
hk = pytest.importorskip("haiku", reason="haiku is not installed (pip install -e '.[test-models]')")
nnx = pytest.importorskip("flax.nnx", reason="flax is not installed (pip install -e '.[test-models]')")

from jitscope.jaxcompat.jit import NO_LEAVES, NON_ARRAYS, OBJECTS, is_static_leaf  # noqa: E402 - after the skips
from jitscope.jaxcompat.wrappers import EQUINOX, FUNCTION, JAX_JIT, NNX, recognise, static_values  # noqa: E402


def f(params, x, lr, *, mode="train"):
    return params["w"] * x * lr


def test_each_wrapper_is_recognised_with_its_own_options() -> None:
    assert recognise(jax.jit(f, static_argnames="mode", donate_argnums=0)).options.donate_argnums == (0,)
    partial_jit = recognise(jax.jit(functools.partial(f, mode="eval")))
    assert partial_jit.kind == JAX_JIT and partial_jit.options.static_leaves == NO_LEAVES
    assert recognise(jax.jit(f, static_argnums=2)).options.static_argnums == (2,)
    equinox = recognise(eqx.filter_jit(f))
    assert (equinox.kind, equinox.fn, equinox.options.static_leaves) == (EQUINOX, f, NON_ARRAYS)
    flax = recognise(nnx.jit(f))
    assert (flax.kind, flax.options.static_leaves, flax.options.return_updates) == (NNX, OBJECTS, True)
    # haiku's transformed apply is a plain function: jax.jit(apply) is how it is jitted
    apply = hk.transform(lambda x: hk.Linear(2)(x)).apply
    assert recognise(apply).kind == FUNCTION and recognise(f).options.static_leaves == NO_LEAVES


def test_a_python_float_is_static_only_under_equinox() -> None:
    assert is_static_leaf(1e-3, NON_ARRAYS)
    assert not is_static_leaf(1e-3, OBJECTS) and not is_static_leaf(1e-3, NO_LEAVES)
    assert is_static_leaf(jnp.tanh, OBJECTS) and is_static_leaf("train", OBJECTS)
    for array in (jnp.ones(2), np.ones(2), np.float32(1.0), jax.ShapeDtypeStruct((2,), jnp.float32)):
        assert not is_static_leaf(array, NON_ARRAYS)  # equinox.is_array: NumPy scalars are arrays too


def test_static_values_are_named_by_parameter_and_path() -> None:
    options = recognise(eqx.filter_jit(f)).options
    found = static_values(options, ({"w": jnp.ones(2), "decay": 0.9}, jnp.ones(2), 1e-2), {"mode": "train"},
                          ["params", "x", "lr", "mode"])
    assert found == [("params['decay']", 0.9), ("lr", 0.01), ("mode", "train")]
