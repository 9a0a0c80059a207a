"""jaxpr records: text forms, summary counts and the JSON round trip, on hand-built records."""

from __future__ import annotations

import json

from jitscope.model.common import Location, from_jsonable, to_jsonable
from jitscope.model.jaxpr import (
    AvalRecord,
    ConstRecord,
    EqnRecord,
    JaxprRecord,
    JaxprSummary,
    LiteralRecord,
    VarRecord,
    count_eqns,
    summarize,
)

F32_8 = AvalRecord((8, 128), "f32")


def test_aval_text() -> None:
    assert str(F32_8) == "f32[8,128]"
    assert str(AvalRecord((), "f32", weak_type=True)) == "f32[]"
    assert str(AvalRecord(("b", 3), "bf16")) == "bf16[b,3]"
    assert str(AvalRecord(dtype="AbstractToken", text="Tok")) == "Tok"
    assert F32_8.nbytes == 8 * 128 * 4
    assert AvalRecord(("b", 3), "f32").nbytes is None
    assert AvalRecord((3,), "weird").nbytes is None
    # typed keys hold their key data (uint32[2] for threefry, uint32[4] for rbg); float0 holds nothing
    assert (AvalRecord((3,), "key<fry>").nbytes, AvalRecord((2,), "key<rbg>").nbytes) == (24, 32)
    assert AvalRecord((5,), "float0").nbytes == 0
    assert str(VarRecord("ba", F32_8)) == "ba"
    assert str(LiteralRecord("1.0", AvalRecord((), "f32"))) == "1.0:f32[]"


def _block() -> JaxprRecord:
    a, b = VarRecord("a", F32_8), VarRecord("b", F32_8)
    return JaxprRecord(
        (VarRecord("w", F32_8),),
        (a,),
        (b,),
        (EqnRecord("tanh", (b,), (a,)),),
        consts=(ConstRecord("w", F32_8, 4096, "global `w`"),),
        shared_name="block",
    )


def _top() -> JaxprRecord:
    x, y, z = (VarRecord(n, F32_8) for n in "xyz")
    block = _block()
    inner_scan = JaxprRecord(
        (),
        (x,),
        (y,),
        (
            EqnRecord("jit", (y,), (x,), params=(("name", "block"),), subjaxprs=(("jaxpr", block),)),
            EqnRecord("mul", (y,), (y, LiteralRecord("2.0", AvalRecord((), "f32")))),
        ),
    )
    return JaxprRecord(
        (),
        (x,),
        (z,),
        (
            EqnRecord("jit", (y,), (x,), params=(("name", "block"),), subjaxprs=(("jaxpr", block),)),
            EqnRecord(
                "scan",
                (z,),
                (y,),
                params=(("length", "3"),),
                subjaxprs=(("jaxpr", inner_scan),),
                location=Location("/p/model.py", 12, "f", 4),
                effects=("Debug",),
            ),
        ),
        effects=("Debug",),
    )


def test_summary_counts_nested_equations_once_per_use() -> None:
    summary = summarize(_top())
    assert summary.n_eqns == 2
    assert summary.n_eqns_total == 2 + 1 + 2 + 1  # top, block, scan body, block again
    assert summary.n_eqns_total == count_eqns(_top())
    assert summary.n_subjaxprs == 3
    assert summary.max_depth == 2
    assert summary.primitive_counts == (("jit", 2), ("tanh", 2), ("mul", 1), ("scan", 1))
    # The shared block's constant is listed once.
    assert [c.origin for c in summary.constants] == ["global `w`"]
    assert summary.const_bytes == 4096
    assert summary.in_avals == (F32_8,) and summary.out_avals == (F32_8,)
    assert summary.effects == ("Debug",)


def test_summary_of_a_flat_jaxpr() -> None:
    x = VarRecord("x", F32_8)
    summary = summarize(JaxprRecord((), (x,), (x,), ()))
    assert (summary.n_eqns, summary.n_eqns_total, summary.n_subjaxprs, summary.max_depth) == (0, 0, 0, 0)
    assert summary.primitive_counts == () and summary.constants == ()


def test_json_round_trip() -> None:
    record = _top()
    data = json.loads(json.dumps(to_jsonable(record)))
    assert data["eqns"][1]["location"] == {"file": "/p/model.py", "line": 12, "function": "f", "column": 4}
    back = from_jsonable(JaxprRecord, data)
    assert back == record
    assert isinstance(back.eqns[1].subjaxprs[0][1].eqns[1].invars[1], LiteralRecord)
    assert back.eqns[0].subjaxprs[0][1].shared_name == "block"
    symbolic = JaxprRecord((), (VarRecord("a", AvalRecord(("b", 3), "f32")),), (), ())
    assert from_jsonable(JaxprRecord, json.loads(json.dumps(to_jsonable(symbolic)))) == symbolic
    summary = summarize(record)
    assert from_jsonable(JaxprSummary, json.loads(json.dumps(to_jsonable(summary)))) == summary
    # The summary of a reloaded record is the same: sharing survives by name, not identity.
    assert summarize(back) == summary
