"""The jaxpr renderer on hand-built records, compared as exact text (no JAX needed)."""

from __future__ import annotations

import io
import sys

from rich.console import Console

from jitscope.model.common import Location
from jitscope.model.jaxpr import (
    AvalRecord,
    ConstRecord,
    EqnRecord,
    JaxprRecord,
    LiteralRecord,
    VarRecord,
    summarize,
)
from jitscope.report.views.jaxpr import JaxprView, render_jaxpr, render_jaxpr_text
from jitscope.report.writers.theme import THEME

F32_3 = AvalRecord((3,), "f32")
F32 = AvalRecord((), "f32")


def var(name: str, aval: AvalRecord = F32_3) -> VarRecord:
    return VarRecord(name, aval)


def loc(line: int) -> Location:
    return Location("/home/me/project/model.py", line, "f")


def make_record() -> JaxprRecord:
    """{ lambda a ; b c. let d = add b 1.0; e = mul d a; f = scan[...] e; i = reduce_sum f in (i, 2.0) }"""
    a, b, c, d, e, f, g, h = (var(n) for n in "abcdefgh")
    body = JaxprRecord(
        constvars=(),
        invars=(g,),
        outvars=(h,),
        eqns=(EqnRecord("sin", (h,), (g,), location=loc(9)),),
    )
    total = var("i", F32)
    return JaxprRecord(
        constvars=(a,),
        invars=(b, c),
        outvars=(total, LiteralRecord("2.0", F32)),
        eqns=(
            EqnRecord("add", (d,), (b, LiteralRecord("1.0", F32)), location=loc(3)),
            EqnRecord("mul", (e,), (d, a), location=loc(4)),
            EqnRecord(
                "scan",
                (f,),
                (e,),
                params=(("length", "2"), ("reverse", "False")),
                subjaxprs=(("jaxpr", body),),
                location=loc(5),
            ),
            EqnRecord("reduce_sum", (total,), (f,), params=(("axes", "(0,)"),), location=loc(6)),
        ),
        consts=(ConstRecord("a", F32_3, 12, "closure variable `w` in model.py:2"),),
    )


EXPECTED = """\
inputs     f32[3], f32[3]
outputs    f32[], f32[]
equations  4 top-level, 5 with nested (1 nested jaxpr, depth 1)
primitives add 1, mul 1, reduce_sum 1, scan 1, sin 1
constants  1 (12 B)
  a  f32[3]       12 B  closure variable `w` in model.py:2
effects    none

{ lambda a:f32[3]; b:f32[3] c:f32[3]. let
    d:f32[3] = add b 1.0:f32[]         # model.py:3
    e:f32[3] = mul d a                 # model.py:4
    f:f32[3] = scan[                   # model.py:5
      jaxpr={ lambda ; g:f32[3]. let
          h:f32[3] = sin g             # model.py:9
        in (h,) }
      length=2
      reverse=False
    ] e
    i:f32[] = reduce_sum[axes=(0,)] f  # model.py:6
  in (i, 2.0:f32[]) }
"""


def console_text(renderable: object, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, theme=THEME)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_text_with_header_and_locations() -> None:
    record = make_record()
    assert render_jaxpr_text(record, summarize(record)) == EXPECTED


def test_rich_view_prints_the_same_text() -> None:
    record = make_record()
    assert console_text(render_jaxpr(record, summarize(record))) == EXPECTED


def test_locations_off_and_no_header() -> None:
    record = make_record()
    assert render_jaxpr_text(record, summarize(record), locations=False, header=False) == (
        "{ lambda a:f32[3]; b:f32[3] c:f32[3]. let\n"
        "    d:f32[3] = add b 1.0:f32[]\n"
        "    e:f32[3] = mul d a\n"
        "    f:f32[3] = scan[\n"
        "      jaxpr={ lambda ; g:f32[3]. let h:f32[3] = sin g in (h,) }\n"
        "      length=2\n"
        "      reverse=False\n"
        "    ] e\n"
        "    i:f32[] = reduce_sum[axes=(0,)] f\n"
        "  in (i, 2.0:f32[]) }\n"
    )


def test_depth_zero_collapses_nested_jaxprs() -> None:
    text = render_jaxpr_text(make_record(), locations=False, depth=0)
    assert "    f:f32[3] = scan[jaxpr=<jaxpr: 1 eqn collapsed> length=2 reverse=False] e\n" in text
    assert "sin" not in text
    assert render_jaxpr_text(make_record(), locations=False, depth=1) == render_jaxpr_text(
        make_record(), locations=False
    )


def test_shared_jaxprs_are_printed_once_on_top() -> None:
    x, y, z = var("x"), var("y"), var("z")
    block = JaxprRecord((), (var("a"),), (var("b"),), (EqnRecord("tanh", (var("b"),), (var("a"),)),))
    block = JaxprRecord(block.constvars, block.invars, block.outvars, block.eqns, shared_name="block")
    top = JaxprRecord(
        (),
        (x,),
        (z,),
        (
            EqnRecord("jit", (y,), (x,), params=(("name", "block"),), subjaxprs=(("jaxpr", block),)),
            EqnRecord("jit", (z,), (y,), params=(("name", "block"),), subjaxprs=(("jaxpr", block),)),
        ),
    )
    assert render_jaxpr_text(top, header=False) == (
        "let block = { lambda ; a:f32[3]. let b:f32[3] = tanh a in (b,) } in\n"
        "{ lambda ; x:f32[3]. let\n"
        "    y:f32[3] = jit[name=block jaxpr=block] x\n"
        "    z:f32[3] = jit[name=block jaxpr=block] y\n"
        "  in (z,) }\n"
    )
    collapsed = render_jaxpr_text(top, header=False, depth=0)
    assert collapsed.startswith("{ lambda ; x:f32[3]. let\n")
    assert "jit[name=block jaxpr=<jaxpr block: 1 eqn collapsed>] x" in collapsed
    assert summarize(top).primitive_counts == (("jit", 2), ("tanh", 2))


def test_long_parameters_break_one_per_line_like_jax() -> None:
    long = "(" + ", ".join(["0"] * 30) + ")"
    record = JaxprRecord(
        (),
        (var("a"),),
        (var("b"),),
        (EqnRecord("reshape", (var("b"),), (var("a"),), params=(("sizes", long),)),),
    )
    assert render_jaxpr_text(record, locations=False) == (
        f"{{ lambda ; a:f32[3]. let\n    b:f32[3] = reshape[\n      sizes={long}\n    ] a\n  in (b,) }}\n"
    )


def test_tuples_of_jaxprs_print_as_jax_does() -> None:
    branch = JaxprRecord((), (var("p"),), (var("q"),), (EqnRecord("neg", (var("q"),), (var("p"),)),) * 1)
    pad = tuple(EqnRecord("neg", (var("q"),), (var("p"),)) for _ in range(4))
    big = JaxprRecord((), (var("p"),), (var("q"),), pad)
    record = JaxprRecord(
        (),
        (var("i", AvalRecord((), "i32")), var("x")),
        (var("y"),),
        (
            EqnRecord(
                "cond",
                (var("y"),),
                (var("i", AvalRecord((), "i32")), var("x")),
                subjaxprs=(("branches[0]", big), ("branches[1]", branch)),
            ),
        ),
    )
    assert render_jaxpr_text(record, locations=False) == (
        "{ lambda ; i:i32[] x:f32[3]. let\n"
        "    y:f32[3] = cond[\n"
        "      branches=(\n"
        "        { lambda ; p:f32[3]. let\n"
        "            q:f32[3] = neg p\n"
        "            q:f32[3] = neg p\n"
        "            q:f32[3] = neg p\n"
        "            q:f32[3] = neg p\n"
        "          in (q,) }\n"
        "        { lambda ; p:f32[3]. let q:f32[3] = neg p in (q,) }\n"
        "      )\n"
        "    ] i x\n"
        "  in (y,) }\n"
    )


def test_styles_are_named_spans() -> None:
    record = make_record()
    text = JaxprView(record, summarize(record)).to_text()
    styled = {(text.plain[s.start : s.end], str(s.style)) for s in text.spans}
    assert ("add", "jaxpr.primitive") in styled
    assert ("d", "jaxpr.var") in styled
    assert (":f32[3]", "jaxpr.type") in styled
    assert ("1.0", "jaxpr.literal") in styled
    assert ("length=", "jaxpr.param") in styled
    assert ("# model.py:3", "jaxpr.location") in styled
    assert ("let", "jaxpr.keyword") in styled
    assert ("inputs     ", "jaxpr.label") in styled


def test_narrow_console_keeps_locations_in_view_and_folds_long_lines() -> None:
    record = make_record()
    out = console_text(render_jaxpr(record, header=False), width=44)
    lines = [line.rstrip() for line in out.splitlines()]
    assert all(len(line) <= 44 for line in lines)
    # The location column moves left so that locations fit...
    assert "    d:f32[3] = add b 1.0:f32[]  # model.py:3" in lines
    assert "    e:f32[3] = mul d a          # model.py:4" in lines
    # ...and a line that still does not fit is folded, not cropped.
    assert "    i:f32[] = reduce_sum[axes=(0,)] f  #" in lines
    assert "model.py:6" in lines


def test_renderers_never_import_jax() -> None:
    import subprocess

    code = (
        "import sys, jitscope.report.views.jaxpr, jitscope.report.views.ir, jitscope.model.jaxpr;"
        "assert 'jax' not in sys.modules, 'jax imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_depth_counts_levels_of_nested_jaxprs_shown() -> None:
    """--depth N shows N levels of nested jaxprs: 0 collapses the scan body, 1 shows it but collapses the cond in it."""
    import jax
    import jax.numpy as jnp

    from jitscope.jaxcompat.jaxpr import jaxpr_to_record

    def step(c, x):
        return jax.lax.cond(x > 0, jnp.sin, jnp.cos, c + x), None

    record = jaxpr_to_record(jax.make_jaxpr(lambda xs: jax.lax.scan(step, 0.0, xs)[0])(jnp.ones(3)))
    depth0 = render_jaxpr_text(record, locations=False, header=False, depth=0)
    depth1 = render_jaxpr_text(record, locations=False, header=False, depth=1)
    full = render_jaxpr_text(record, locations=False, header=False)
    assert "jaxpr=<jaxpr: " in depth0 and "cond[" not in depth0
    assert "cond[" in depth1 and "branches=" in depth1 and "collapsed>" in depth1 and "sin" not in depth1
    assert "collapsed" not in full and "sin" in full and "cos" in full
    assert render_jaxpr_text(record, locations=False, header=False, depth=2) == full
