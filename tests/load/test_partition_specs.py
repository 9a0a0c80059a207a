"""Sharding syntax in specs, mesh parsing, and the checks against a mesh: pure Python, no devices needed."""

from __future__ import annotations

import pytest

from jitscope.errors import SpecError, UsageError
from jitscope.load.mesh import parse_mesh
from jitscope.load.partition import check_spec
from jitscope.load.specs import ArraySpec, parse_shapes


def test_partition_syntax_in_positional_args_and_pytrees() -> None:
    x, params, y, z = parse_shapes("f32[64,128]@(data,None), {'w': f32[3]@()}, f32[8,4]@((data,model),None), "
                                   "f32[8]@data")
    assert x == ArraySpec((64, 128), "float32", sharding=("data", None))
    assert params["w"].sharding == ()
    assert y.sharding == (("data", "model"), None)
    assert z.sharding == ("data",)
    assert [str(s) for s in (x, params["w"], y)] == ["f32[64,128]@(data,None)", "f32[3]@()",
                                                     "f32[8,4]@((data,model),None)"]


def test_unsharded_specs_are_unchanged() -> None:
    (x,) = parse_shapes("f32[8,128]")
    assert x.sharding is None and str(x) == "f32[8,128]"


@pytest.mark.parametrize("text", ["f32[8]@(1)", "f32[8]@(data,(model,(x,)))", "(f32[8],)@(data)"])
def test_bad_sharding_syntax_is_one_line(text: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_shapes(text)
    assert "\n" not in err.value.message


def test_parse_mesh() -> None:
    mesh = parse_mesh("data=4, model=2")
    assert mesh.axes == (("data", 4), ("model", 2)) and mesh.size == 8 and str(mesh) == "data=4,model=2"
    for bad in ("data", "data=4,data=2", "data=0", "=4", "data=4,"):
        with pytest.raises(UsageError):
            parse_mesh(bad)


def test_check_spec_against_a_mesh() -> None:
    axes = {"data": 4, "model": 2}
    check_spec((64, 128), ("data", "model"), axes, "x")
    cases = {
        ("data", "batch"): "unknown mesh axis 'batch'",
        ("data", None, None): "has 3 entries but the array has 2",
        ("data", "data"): "used twice",
        (None, ("data", "model")): "dimension 1 (size 6) is not divisible by 8",
    }
    for spec, message in cases.items():
        with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
            check_spec((64, 6) if spec[-1] == ("data", "model") else (64, 128), spec, axes, "x")
