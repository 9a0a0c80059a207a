"""Link keys: XLA op_name paths and jaxpr equations reduce to the same ``jit scopes/primitive`` key."""

from __future__ import annotations

import pytest

from jitscope.report.views.links import eqn_key, hlo_line_links, op_key, stablehlo_key, stablehlo_line_links


@pytest.mark.parametrize(
    ("op_name", "key"),
    [
        ("jit(predict)/dot_general", "dot_general"),
        ("jit(train_step)/jvp()/jit(relu)/max", "jit(relu)/max"),
        ("jit(train_step)/transpose(jvp(jit(log_softmax)))/div", "jit(log_softmax)/div"),
        ("jit(train_step)/jvp(jit(take_along_axis))", "jit(take_along_axis)"),
        ("jit(rnn)/while/body/dot_general", "dot_general"),
        ("reduce_sum", "reduce_sum"),
        ("jit(f)/transpose(jvp())/reduce_sum", "reduce_sum"),
        # JAX before 0.5 puts its module's scope after the function's
        ("jit(predict)/jit(main)/jit(relu)/max", "jit(relu)/max"),
        ("jit(predict)/jit(main)/dot_general", "dot_general"),
    ],
)
def test_op_names_reduce_to_scopes_and_primitive(op_name: str, key: str) -> None:
    assert op_key(op_name) == key


def test_equations_get_the_same_keys() -> None:
    assert eqn_key((), "dot_general") == "dot_general"
    assert eqn_key(("jit(relu)",), "max") == "jit(relu)/max"
    assert eqn_key((), "jit", (("name", "relu"),)) == "jit(relu)"
    assert eqn_key((), "pjit", (("name", "transpose(jvp(log_softmax))"),)) == "jit(log_softmax)"
    assert stablehlo_key("jit(relu)/max") == "jit(relu)/~maximum" and stablehlo_key("add") == "~add"


def test_hlo_lines_give_op_and_source_keys() -> None:
    line = ('  %max.4 = f32[8]{0} maximum(%a, %b), metadata={op_name="jit(f)/jit(relu)/max" '
            'source_file="/home/u/model.py" source_line=30}')
    assert hlo_line_links(line) == ("jit(relu)/max", "model.py:30")
    assert hlo_line_links('  %x = f32[] parameter(0), metadata={op_name="x"}') == ("x", "")
    assert hlo_line_links("%fused_computation (p: f32[2]) -> f32[2] {") == ("", "")


def test_stablehlo_ops_are_keyed_in_their_function() -> None:
    assert stablehlo_line_links("    %1 = stablehlo.maximum %arg0, %0 : tensor<8xf32>", "relu", "main") == (
        "jit(relu)/~maximum", "")
    assert stablehlo_line_links("    %3 = stablehlo.add %0, %2 : tensor<8xf32>", "main", "main") == ("~add", "")
    assert stablehlo_line_links("    return %8 : tensor<8xf32>", "main", "main") == ("", "")
