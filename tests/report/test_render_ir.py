"""StableHLO and HLO highlighters: which spans get which style, on sample lines."""

from __future__ import annotations

import io

from rich.console import Console

from jitscope.report.views.ir import detect_dialect, highlight_ir
from jitscope.report.writers.theme import THEME


def spans(line: str, dialect: str) -> list[tuple[str, str]]:
    text = highlight_ir(line, dialect)  # type: ignore[arg-type]
    return [(text.plain[s.start : s.end], str(s.style).removeprefix("hlo.")) for s in sorted(text.spans)]


def test_stablehlo_operation() -> None:
    assert spans("    %1 = stablehlo.add %arg0, %cst : tensor<2x3xf32>", "stablehlo") == [
        ("%1", "value"),
        ("stablehlo.add", "op"),
        ("%arg0", "value"),
        ("%cst", "value"),
        ("tensor<2x3xf32>", "type"),
    ]


def test_stablehlo_constant_attributes_and_location() -> None:
    assert spans(
        "    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32> loc(#loc17)", "stablehlo"
    ) == [
        ("%cst_0", "value"),
        ("stablehlo.constant", "op"),
        ("dense", "attr"),
        ("1.000000e+00", "number"),
        ("tensor<f32>", "type"),
        ("loc(#loc17)", "comment"),
    ]
    line = "    %4 = stablehlo.dot_general %1, %3, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>"
    assert ("contracting_dims", "attr") in spans(line, "stablehlo")
    assert ("1", "number") in spans(line, "stablehlo")


def test_stablehlo_module_and_func_header() -> None:
    got = spans(
        "module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n"
        '  func.func public @main(%arg0: tensor<3xf32> loc("x")) -> (tensor<3xf32> {jax.result_info = "result"}) {',
        "stablehlo",
    )
    assert got == [
        ("module", "op"),
        ("@jit_f", "value"),
        ("mhlo.num_partitions", "attr"),  # an attribute key, although dialect-qualified like an op
        ("1", "number"),
        ("i32", "type"),
        ("func.func", "op"),
        ("@main", "value"),
        ("%arg0", "value"),
        ("tensor<3xf32>", "type"),
        ('loc("x")', "comment"),
        ("tensor<3xf32>", "type"),
        ("jax.result_info", "attr"),
        ('"result"', "string"),
    ]


def test_location_definitions_are_one_comment() -> None:
    assert spans('#loc3 = loc("/src/model.py":4:6 to :57)', "stablehlo") == [
        ('#loc3 = loc("/src/model.py":4:6 to :57)', "comment")
    ]
    assert spans('#loc24 = loc("jit(f)/add"(#loc18))', "stablehlo") == [
        ('#loc24 = loc("jit(f)/add"(#loc18))', "comment")
    ]


def test_hlo_instruction_with_metadata() -> None:
    line = '  ROOT %add.1 = f32[2,3]{1,0} add(%param_0.6, %broadcast.1), metadata={op_name="jit(f)/add" stack_frame_id=3}'
    assert spans(line, "hlo") == [
        ("ROOT", "op"),
        ("%add.1", "value"),
        ("f32[2,3]{1,0}", "type"),  # the digits inside a type are not numbers
        ("add", "op"),
        ("%param_0.6", "value"),
        ("%broadcast.1", "value"),
        ('metadata={op_name="jit(f)/add" stack_frame_id=3}', "comment"),
    ]


def test_hlo_attributes_numbers_and_entry() -> None:
    line = "  %reduce.0 = f32[] reduce(%sin.0, %constant.0), dimensions={0,1}, to_apply=%region_0.1"
    assert spans(line, "hlo") == [
        ("%reduce.0", "value"),
        ("f32[]", "type"),
        ("reduce", "op"),
        ("%sin.0", "value"),
        ("%constant.0", "value"),
        ("dimensions", "attr"),
        ("0", "number"),
        ("1", "number"),
        ("to_apply", "attr"),
        ("%region_0.1", "value"),
    ]
    assert spans("ENTRY %main.2 (x.1: f32[2,3], y.1: f32[3]) -> (f32[2], pred[]) {", "hlo") == [
        ("ENTRY", "op"),
        ("%main.2", "value"),
        ("f32[2,3]", "type"),
        ("f32[3]", "type"),
        ("f32[2]", "type"),
        ("pred[]", "type"),
    ]
    assert ("tuple", "op") in spans("  ROOT %t = (f32[2]{0}, pred[]) tuple(%a, %b)", "hlo")


def test_detect_dialect_and_plain_console_output() -> None:
    hlo = "HloModule jit_f, is_scheduled=true\n\nENTRY %main { ROOT %x = f32[] parameter(0) }\n"
    assert detect_dialect(hlo) == "hlo"
    assert detect_dialect("module @jit_f {\n}") == "stablehlo"
    text = highlight_ir(hlo)
    assert ("HloModule", "hlo.op") in [(text.plain[s.start : s.end], str(s.style)) for s in text.spans]
    console = Console(file=io.StringIO(), width=100, color_system=None, theme=THEME)
    console.print(text)
    assert console.file.getvalue() == hlo  # type: ignore[attr-defined]


def test_render_ir_prints_like_the_highlighted_text() -> None:
    from jitscope.report.views.ir import render_ir

    ir = (
        "module @jit_f {\n"
        "  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {\n"
        "    %0 = stablehlo.sine %arg0 : tensor<3xf32> loc(#loc3)\n"
        "    return %0 : tensor<3xf32>\n"
        "  }\n"
        "}\n"
    )
    outputs = []
    for renderable in (highlight_ir(ir), render_ir(ir)):
        # Every setting explicit, environment ignored (_environ): NO_COLOR, TERM=dumb or COLUMNS must not matter.
        console = Console(
            file=io.StringIO(), width=100, color_system="truecolor", force_terminal=True, no_color=False,
            legacy_windows=False, theme=THEME, _environ={},
        )
        console.print(renderable)
        outputs.append(console.file.getvalue())  # type: ignore[attr-defined]
    assert outputs[0] == outputs[1]
    assert "\x1b[" in outputs[0]
