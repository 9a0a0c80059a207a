"""Recorded dtype names back to JAX dtypes, and concrete typed keys (``jitscope.jaxcompat.dtypes``)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jitscope.dtypes import ITEMSIZE, dtype_name
from jitscope.errors import SpecError
from jitscope.jaxcompat.dtypes import key_implementations, jax_dtype, make_keys


def test_every_recorded_name_reads_back_as_its_dtype() -> None:
    for name in ITEMSIZE:  # NumPy's, ml_dtypes' (those this JAX has) and float0
        if name == "float0" or hasattr(jax.numpy, name):
            assert dtype_name(jax_dtype(name)) == name
    assert jax_dtype("float0") == jax.dtypes.float0
    for impl in key_implementations().values():  # every implementation this JAX has, philox included
        dtype = jax.random.key(0, impl=impl).dtype
        assert jax_dtype(dtype_name(dtype)) == dtype
    assert jax_dtype("key") == jax.random.key(0).dtype  # JAX's default implementation


def test_an_unknown_key_implementation_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match=r"unknown PRNG key implementation key<nope>") as info:
        jax_dtype("key<nope>")
    assert "key<fry> (threefry2x32)" in (info.value.hint or "")


@pytest.mark.parametrize("name", ["key<fry>", "key<rbg>", "key<urbg>", "key"])
def test_keys_are_made_from_seeded_key_data(name: str) -> None:
    keys = make_keys(name, (2, 3), np.random.default_rng(7))
    assert keys.shape == (2, 3) and jax.dtypes.issubdtype(keys.dtype, jax.dtypes.prng_key)
    again = make_keys(name, (2, 3), np.random.default_rng(7))
    assert np.array_equal(jax.random.key_data(keys), jax.random.key_data(again))
    assert jax.random.normal(keys[0, 0], (2,)).shape == (2,)  # usable as a key


def test_jaxpr_records_name_extended_dtypes_as_jax_prints_them() -> None:
    """float0 was recorded as "void" (NumPy's name for it), so its bytes were unknown."""
    from jitscope.jaxcompat.jaxpr import jaxpr_to_record

    jaxpr = jax.make_jaxpr(lambda t, k, q: (t, k, q))(np.zeros(2, jax.dtypes.float0), jax.random.key(0),
                                                       jax.numpy.ones(2, jax.numpy.uint2))
    record = jaxpr_to_record(jaxpr)
    assert [(str(v.aval), v.aval.nbytes) for v in record.invars] == [("float0[2]", 0), ("key<fry>[]", 8),
                                                                      ("u2[2]", 1)]
