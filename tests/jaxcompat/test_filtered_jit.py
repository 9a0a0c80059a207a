"""FilteredJit: every non-array leaf static, the arrays named as the user's own arguments."""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jitscope.jaxcompat.jit import FilteredJit


def _parameter_names(lowered: Any) -> list[str]:
    text = lowered.compile().as_text()
    entry = text[text.index("ENTRY"):]
    found = re.findall(r"parameter\((\d+)\).*?op_name=\"((?:[^\"\\]|\\.)*)\"", entry)
    return [name.replace("\\'", "'") for _, name in sorted(found, key=lambda f: int(f[0]))]


def step(params: dict, x: jax.Array, *, scale: float = 2.0, act: Any = jnp.tanh) -> jax.Array:
    return act(x @ params["w"] + params["b"]) * scale


def test_arrays_keep_the_names_of_the_users_arguments() -> None:
    f = FilteredJit(step)
    params = {"w": jnp.ones((3, 4)), "b": jnp.zeros(4)}
    assert _parameter_names(f.lower(params, jnp.ones((2, 3)), act=jax.nn.relu)) == ["params['b']", "params['w']", "x"]
    (out,) = f(params, jnp.ones((2, 3)), scale=3.0, act=jax.nn.relu)
    np.testing.assert_allclose(out, np.full((2, 4), 9.0))  # relu(3) * 3: the static float and function were used


class Opaque:
    """A pytree node that cannot be rebuilt around None (its unflatten checks its children)."""

    def __init__(self, w: jax.Array) -> None:
        self.w = w
        self.label = "opaque"


jax.tree_util.register_pytree_node(
    Opaque, lambda o: ((o.w,), o.label),
    lambda label, children: Opaque(children[0]) if children[0] is not None else (_ for _ in ()).throw(TypeError()))


def test_a_structure_that_cannot_hold_none_goes_in_flat() -> None:
    def g(o: Opaque, n: int) -> jax.Array:
        return o.w * n

    f = FilteredJit(g)
    (out,) = f(Opaque(jnp.ones(3)), 4)
    np.testing.assert_allclose(out, np.full(3, 4.0))
    assert len(_parameter_names(f.lower(Opaque(jnp.ones(3)), 4))) == 1


def test_a_callable_without_a_signature_still_runs() -> None:
    f = FilteredJit(jnp.sin)  # a jitted ufunc-like object: whatever signature it shows, the call works
    (out,) = f(jnp.zeros(3))
    np.testing.assert_allclose(out, np.zeros(3))


def test_in_place_updates_come_back_after_the_outputs() -> None:
    """The nnx rule: an argument leaf the function replaced is returned after the outputs."""

    class Box:
        def __init__(self, value: jax.Array) -> None:
            self.value = value

    jax.tree_util.register_pytree_node(Box, lambda b: ((b.value,), None), lambda _, c: Box(c[0]))

    def bump(box: Box) -> jax.Array:
        box.value = box.value + 1
        return box.value.sum()

    total, updated = FilteredJit(bump)(Box(jnp.zeros(2)))
    assert float(total) == 2.0 and updated.tolist() == [1.0, 1.0]
