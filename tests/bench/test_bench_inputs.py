"""Concrete inputs for abstract specs (``timing.inputs.make_inputs``), for every dtype a spec can name."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jitscope.load.specs import build_argset
from jitscope.timing.inputs import make_inputs


def _jax_has(dtype: str) -> bool:
    """Whether the installed JAX makes arrays of ``dtype`` (float8_e8m0fnu and int2/uint2 came after 0.4.38)."""
    try:
        jnp.zeros(1, getattr(jnp, dtype))
    except (AttributeError, TypeError):
        return False
    return True


def test_typed_keys_float0_and_narrow_dtypes_get_valid_values_of_their_dtype() -> None:
    text = "key<fry>[], key<rbg>[2,3], key[4], float0[3], bf16[4], float8_e4m3fn[4], int4[64]"
    (fry, rbg, default, tangent, half, f8, i4), _ = make_inputs(build_argset(text), seed=0)
    assert fry.dtype == jax.random.key(0).dtype and fry.shape == ()
    assert rbg.dtype == jax.random.key(0, impl="rbg").dtype and rbg.shape == (2, 3)
    assert default.dtype == jax.random.key(0).dtype and default.shape == (4,)
    assert jax.random.normal(rbg[1, 2], (2,)).shape == (2,)
    assert tangent.dtype == jax.dtypes.float0 and tangent.shape == (3,)
    assert (half.dtype, f8.dtype) == (jnp.bfloat16, jnp.float8_e4m3fn)
    ranges = [(i4, 0, 7)]
    if _jax_has("float8_e8m0fnu"):
        (scale,), _ = make_inputs(build_argset("float8_e8m0fnu[64]"), seed=0)
        assert not np.isnan(np.asarray(scale, np.float32)).any()  # an unsigned float makes NaN of negatives
    if _jax_has("int2") and _jax_has("uint2"):
        (u2, i2), _ = make_inputs(build_argset("uint2[64], int2[64]"), seed=0)
        ranges += [(u2, 0, 3), (i2, 0, 1)]
    for array, low, high in ranges:  # in range: not wrapped to negatives
        values = np.asarray(array, np.int32)
        assert values.min() >= low and values.max() <= high and len(set(values.tolist())) > 1


def test_the_same_seed_gives_the_same_keys() -> None:
    argset = build_argset("key<urbg>[5]")
    (first,), _ = make_inputs(argset, seed=3)
    (again,), _ = make_inputs(argset, seed=3)
    (other,), _ = make_inputs(argset, seed=4)
    assert np.array_equal(jax.random.key_data(first), jax.random.key_data(again))
    assert not np.array_equal(jax.random.key_data(first), jax.random.key_data(other))
