from __future__ import annotations

import pytest

from jitscope.errors import SpecError
from jitscope.load.specs import ArgSet, ArraySpec, build_argset, parse_shapes, parse_value


def test_positional_arrays_and_scalars():
    assert parse_shapes("f32[8,128], i32[8], f32[]") == (
        ArraySpec((8, 128), "float32"),
        ArraySpec((8,), "int32"),
        ArraySpec((), "float32"),
    )


@pytest.mark.parametrize(
    ("short", "numpy_name"),
    [("bf16", "bfloat16"), ("f16", "float16"), ("f64", "float64"), ("i8", "int8"), ("i64", "int64"),
     ("u8", "uint8"), ("u64", "uint64"), ("bool", "bool"), ("c64", "complex64"), ("c128", "complex128"),
     ("float32", "float32"), ("int16", "int16")],
)
def test_dtype_names(short, numpy_name):
    (spec,) = parse_shapes(f"{short}[2]")
    assert spec.dtype == numpy_name


def test_pytrees():
    (params, batch) = parse_shapes("{'w': f32[128,10], 'b': f32[10]}, (f32[4], [i32[2], bool[]])")
    assert params == {"w": ArraySpec((128, 10), "float32"), "b": ArraySpec((10,), "float32")}
    assert batch == (ArraySpec((4,), "float32"), [ArraySpec((2,), "int32"), ArraySpec((), "bool")])


def test_literals_pass_through():
    assert parse_shapes("f32[2], 3, 'mode', None") == (ArraySpec((2,), "float32"), 3, "mode", None)


def test_statics_and_keyword_args():
    argset = build_argset("f32[]", ["threshold=0.0", "modes=('a', 'b')"], ["mask=bool[3]"])
    assert argset.args == (ArraySpec((), "float32"),)
    assert argset.kwargs == {"threshold": 0.0, "modes": ("a", "b"), "mask": ArraySpec((3,), "bool")}
    assert argset.static_names == ("threshold", "modes")
    assert argset.describe() == "f32[], threshold=0.0, modes=('a', 'b'), mask=bool[3]"


def test_nbytes_counts_every_leaf():
    argset = build_argset("{'w': f32[10,10]}, bf16[4]", None, ["m=u8[3]"])
    assert argset.nbytes == 400 + 8 + 3


def test_empty_shapes_is_no_arguments():
    assert build_argset("") == ArgSet()


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        ("f33[3]", 1, "unknown dtype 'f33'"),
        ("f32[3], q8[2]", 9, "unknown dtype 'q8'"),
        ("f32[-1]", 5, "non-negative integer"),
        ("f32[2.5]", 5, "non-negative integer"),
        ("f32[], x", 8, "unknown name 'x'"),
        ("f32", 1, "needs a shape"),
        ("f32[8,", 7, "unclosed bracket"),
        ("{'a': f32[2]", 13, "unclosed bracket"),
    ],
)
def test_errors_report_the_column(text, column, fragment):
    with pytest.raises(SpecError) as info:
        parse_shapes(text)
    assert f"at column {column}:" in info.value.message
    assert fragment in info.value.message
    # the detail points at the column with a caret under the user's text
    assert info.value.detail.splitlines()[1].index("^") == column + 1


def test_static_must_be_literal_and_assignment_form():
    with pytest.raises(SpecError, match="must be a Python literal"):
        build_argset(None, ["x=f32[2]"])
    with pytest.raises(SpecError, match="expected NAME=VALUE"):
        build_argset(None, ["0.5"])
    with pytest.raises(SpecError, match="--arg mask"):
        build_argset(None, None, ["mask=bool[3"])


def test_parse_value_single():
    assert parse_value("f32[2,2]") == ArraySpec((2, 2), "float32")
    assert parse_value("[1, 2]") == [1, 2]


def test_named_tuples_are_shown_with_their_names() -> None:
    from typing import NamedTuple

    from jitscope.load.specs import format_value

    class ScaleByAdamState(NamedTuple):
        count: object
        mu: object

    class EmptyState(NamedTuple):
        pass

    spec = ArraySpec((), "int32")
    assert format_value((ScaleByAdamState(spec, {"w": ArraySpec((3,), "float32")}), EmptyState())) == (
        "(ScaleByAdamState(count=i32[], mu={'w': f32[3]}), EmptyState())")
    assert format_value((spec,)) == "(i32[],)"  # a plain tuple stays spec text


@pytest.mark.parametrize(
    ("text", "dtype", "nbytes"),
    [("key<fry>[]", "key<fry>", 8), ("key<threefry2x32>[2]", "key<fry>", 16), ("key<rbg>[3]", "key<rbg>", 48),
     ("key<urbg>[]", "key<urbg>", 16), ("key[4]", "key", 32), ("float0[5]", "float0", 0),
     ("int4[8]", "int4", 4), ("float8_e4m3fn[2]", "float8_e4m3fn", 2), ("uint2[8]", "uint2", 2)],
)
def test_typed_keys_float0_and_narrow_dtypes_are_spec_dtypes(text, dtype, nbytes):
    (spec,) = parse_shapes(text)
    assert spec.dtype == dtype and spec.nbytes == nbytes
    assert parse_shapes(str(spec)) == (spec,)  # what a report or a label shows reads back


def test_keys_inside_pytrees_shardings_and_errors_at_the_users_column():
    assert parse_shapes("{'rng': key<fry>[]}, key<rbg>[8]@(data,)")[0] == {"rng": ArraySpec((), "key<fry>")}
    assert parse_value("key[2]") == ArraySpec((2,), "key")
    for text, column, fragment in [("f32[], key<fry>", 8, "'key<fry>' needs a shape"),
                                   ("key<fry>[-1]", 10, "non-negative integer"),
                                   ("kex<fry>[2]", 1, "not an array spec")]:
        with pytest.raises(SpecError) as info:
            parse_shapes(text)
        assert f"at column {column}:" in info.value.message and fragment in info.value.message


def test_string_literals_are_kept_as_written():
    """The spec rewrites (``f32[]``, ``key<fry>``) changed strings too: ``'[]'`` became ``'[()]'``."""
    assert parse_value("'[]'") == "[]" and parse_value("'key<fry>[]'") == "key<fry>[]"
    assert parse_shapes("\"a[ ]\\\"b\", {'k': key<fry>[]}") == ('a[ ]"b', {"k": ArraySpec((), "key<fry>")})
    with pytest.raises(SpecError, match="at column 11:"):
        parse_shapes("'[]', f32[-1]")


def test_rank_is_capped_at_numpys_and_size_below_2_62_bytes_a_bool_one_byte():
    """Thousands of dimensions crashed XLA's compiler and bench failed past 64; bool[2**62] aborted XLA (issue 30)."""
    from jitscope.load.specs import max_rank

    assert parse_shapes("f32[" + ",".join(["1"] * max_rank()) + "]")[0].shape == (1,) * max_rank()
    for dims in (max_rank() + 1, 5000):
        with pytest.raises(SpecError, match=f"{dims} dimensions, more than the {max_rank()}"):
            parse_shapes("f32[" + ",".join(["1"] * dims) + "]")
    for text in (f"bool[{2**62}]", f"f32[{2**60}]", f"i8[{2**31},{2**31}]", f"int4[{2**63}]"):
        with pytest.raises(SpecError, match="2\\*\\*62 bytes or more"):
            parse_shapes(text)
    assert parse_shapes(f"bool[{2**62 - 1}]")[0].nbytes == 2**62 - 1


def test_a_narrow_dtype_this_jax_lacks_is_refused_while_parsing(monkeypatch):
    """JAX 0.4.38 has no int2 or float8_e8m0fnu: the spec says so at its column, not a later failure."""
    import jax.numpy as jnp

    from jitscope.jaxcompat.dtypes import has_dtype

    monkeypatch.delattr(jnp, "float8_e8m0fnu", raising=False)
    has_dtype.cache_clear()
    try:
        with pytest.raises(SpecError) as info:
            parse_shapes("f32[2], float8_e8m0fnu[4]")
        assert "at column 9:" in info.value.message and "has no dtype 'float8_e8m0fnu'" in info.value.message
    finally:
        has_dtype.cache_clear()
