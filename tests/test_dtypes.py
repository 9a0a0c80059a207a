"""``jitscope.dtypes``: one name for every dtype, as JAX prints it, and the spec language's view of it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jitscope.dtypes import ITEMSIZE, array_nbytes, canonical_dtype, dtype_name, is_key, itemsize, key_tag


@pytest.mark.parametrize(("impl", "name"), [("threefry2x32", "key<fry>"), ("rbg", "key<rbg>"),
                                            ("unsafe_rbg", "key<urbg>")])
def test_a_typed_keys_dtype_is_named_as_jax_prints_it(impl: str, name: str) -> None:
    key = jax.random.key(0, impl=impl)
    assert dtype_name(key.dtype) == name == str(key.dtype)  # np.dtype(key.dtype) raises TypeError
    assert canonical_dtype(name) == name and canonical_dtype(f"key<{impl}>") == name
    assert itemsize(name) == key.dtype.itemsize


def test_float0_is_not_void_and_scalar_types_are_named_by_their_dtype() -> None:
    assert np.dtype(jax.dtypes.float0).name == "void"
    assert dtype_name(jax.dtypes.float0) == "float0" and itemsize("float0") == 0
    assert dtype_name(jnp.bfloat16) == dtype_name(jnp.dtype("bfloat16")) == "bfloat16"
    assert dtype_name(np.float32) == "float32" and dtype_name("int4") == "int4"


def test_every_narrow_dtype_jax_has_is_a_spec_dtype() -> None:
    names = [n for n in ("int2", "uint2", "int4", "uint4", "float4_e2m1fn", "float8_e3m4", "float8_e4m3",
                         "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                         "float8_e4m3b11fnuz", "float8_e8m0fnu") if hasattr(jnp, n)]
    assert names
    for name in names:
        assert dtype_name(getattr(jnp, name)) == name and canonical_dtype(name) == name and name in ITEMSIZE


def test_key_names_and_sizes() -> None:
    tags = (key_tag("key<fry>"), key_tag("key"), key_tag("float32"), key_tag("key<>"))
    assert tags == ("fry", "", None, None)
    assert canonical_dtype("key") == "key" and is_key("key") and not is_key("keys")
    assert canonical_dtype("key<not a tag>") is None
    assert array_nbytes((3,), "key<rbg>") == 48 and array_nbytes((4,), "key") == 32
    assert array_nbytes((8,), "int4") == 4 and array_nbytes((5,), "float0") == 0
