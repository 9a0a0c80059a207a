"""Folding library code out of a jaxpr and the location modes, on hand-built records (no JAX needed)."""

from __future__ import annotations

from jitscope.model.common import Location
from jitscope.model.jaxpr import AvalRecord, EqnRecord, JaxprRecord, LiteralRecord, VarRecord
from jitscope.report.views.jaxpr import JaxprRenderOptions, jaxpr_layout, render_jaxpr_text

F32 = AvalRecord((8,), "f32")
SITE = "/venv/lib/python3.11/site-packages"
ATTENTION = f"{SITE}/flax/nnx/nn/attention.py"


def user(line: int) -> Location:
    return Location("/home/me/project/model.py", line, "Block.__call__", 4)


def library(line: int) -> Location:
    return Location(ATTENTION, line, "dot_product_attention")


CALL = Location(ATTENTION, 600, "MultiHeadAttention.__call__")


def v(name: str) -> VarRecord:
    return VarRecord(name, F32)


def make_record() -> JaxprRecord:
    """x -> a = x + 1 (line 3); b, c = attention (three library eqns, line 4); d = jit[_where] (line 6); e = b * d."""
    x, a, b, c, t, d, e = (v(n) for n in "xabctde")
    inner_in, inner_out = v("f"), v("g")
    where = JaxprRecord((), (inner_in,), (inner_out,),
                        (EqnRecord("neg", (inner_out,), (inner_in,), location=user(6)),))
    lib = {"location": user(4), "library": library(288), "library_call": CALL}
    return JaxprRecord(
        constvars=(),
        invars=(x,),
        outvars=(e,),
        eqns=(
            EqnRecord("add", (a,), (x, LiteralRecord("1.0", AvalRecord((), "f32"))), location=user(3)),
            EqnRecord("exp", (t,), (a,), **lib),  # type: ignore[arg-type]
            EqnRecord("mul", (b,), (t, a), **lib),  # type: ignore[arg-type]
            EqnRecord("sin", (c,), (t,), **lib),  # type: ignore[arg-type]
            EqnRecord("jit", (d,), (c,), params=(("name", "_where"),), subjaxprs=(("jaxpr", where),),
                      location=user(6)),
            EqnRecord("mul", (e,), (b, d), location=user(7)),
        ),
    )


def test_locations_full_user_and_none():
    record = make_record()
    full = render_jaxpr_text(record, header=False)
    assert "c:f32[8] = sin t            # model.py:4 <- flax/nnx/nn/attention.py:288" in full
    assert "a:f32[8] = add x 1.0:f32[]  # model.py:3\n" in full
    user_only = render_jaxpr_text(record, header=False, locations="user")
    assert "# model.py:4\n" in user_only and "attention.py" not in user_only
    assert "#" not in render_jaxpr_text(record, header=False, locations="none")
    # The old boolean spellings still work.
    assert render_jaxpr_text(record, header=False, locations=True) == full
    assert render_jaxpr_text(record, header=False, locations=False) == render_jaxpr_text(
        record, header=False, locations="none")


def test_fold_shows_a_library_call_as_one_line_binding_what_is_read_later():
    text = render_jaxpr_text(make_record(), header=False, fold=True)
    assert text == (
        "{ lambda ; x:f32[8]. let\n"
        "    a:f32[8] = add x 1.0:f32[]                                 # model.py:3\n"
        "    b:f32[8] c:f32[8] = <3 eqns: flax MultiHeadAttention>      # model.py:4\n"
        "    d:f32[8] = jit[name=_where jaxpr=<jaxpr: 1 eqn folded>] c  # model.py:6\n"
        "    e:f32[8] = mul b d                                         # model.py:7\n"
        "  in (e,) }\n"
    )


def test_fold_keeps_user_code_nested_in_a_library_call_in_view():
    """A library's jit (nnx.jit, equinox.filter_jit) around the user's step is never folded away."""
    step = make_record()
    outer_in, outer_out = v("p"), v("q")
    top = JaxprRecord((), (outer_in,), (outer_out,), (
        EqnRecord("jit", (outer_out,), (outer_in,), params=(("name", "train_step"),), subjaxprs=(("jaxpr", step),),
                  library=Location(f"{SITE}/flax/nnx/transforms/compilation.py", 138, "JitWrapped.__call__"),
                  library_call=Location(f"{SITE}/flax/nnx/transforms/compilation.py", 138, "JitWrapped.__call__")),))
    text = render_jaxpr_text(top, header=False, fold=True)
    assert "<3 eqns: flax MultiHeadAttention>" in text and "name=train_step" in text
    assert "# flax/nnx/transforms/compilation.py:138" in text


def test_long_variable_lists_are_shortened_with_a_count():
    many = tuple(v(f"v{i}") for i in range(20))
    out = v("out")
    record = JaxprRecord((), many, (out,), (EqnRecord("concatenate", (out,), many, location=user(3)),))
    text = render_jaxpr_text(record, header=False, fold=True, locations="none")
    assert text.splitlines()[0] == "{ lambda ; v0:f32[8] v1:f32[8] v2:f32[8] v3:f32[8] … +16. let"
    assert "concatenate v0 v1 v2 v3 … +16" in text
    assert "v19" in render_jaxpr_text(record, header=False, locations="none")  # unfolded: everything


def test_expandable_folds_keep_the_folded_lines_in_closed_blocks():
    layout = jaxpr_layout(make_record(), JaxprRenderOptions(fold=True, expand_folds=True))
    texts = ["".join(t for t, _ in line).strip() for line in layout.lines]
    fold_at = texts.index("b:f32[8] c:f32[8] = <3 eqns: flax MultiHeadAttention>")
    assert layout.folds[fold_at] == 1 and layout.closed[fold_at]
    assert layout.line_groups[fold_at] is not None and layout.line_groups[fold_at].n_eqns == 3
    # The three equations follow the fold line, and the block closes after the last one.
    assert [texts[fold_at + i].split(" = ")[1].split()[0] for i in (1, 2, 3)] == ["exp", "mul", "sin"]
    assert layout.unfolds[fold_at + 3] == 1
    # The library jaxpr of jit[_where] is there too, in a block that starts closed.
    head = next(i for i, t in enumerate(texts) if t.startswith("jaxpr={ lambda"))
    assert layout.folds[head] == 1 and layout.closed[head]
    assert sum(layout.folds) == sum(layout.unfolds)
