"""The HLO reader's metadata: quoted values holding braces, quotes and field names are read whole."""

from __future__ import annotations

import pytest

from jitscope.model.common import Location
from jitscope.profiling.hlo import parse_instruction, parse_shape

SHAPE = "%t = f32[8]{0} tanh(f32[8]{0} %x), "


@pytest.mark.parametrize(("metadata", "op_name", "frame", "source"), [
    ('metadata={op_type="tanh" op_name="jit(f)/tanh" stack_frame_id=12}', "jit(f)/tanh", 12, None),
    ('metadata={op_type="tanh" op_name="jit(f)/tanh" source_file="/a/m.py" source_line=7}', "jit(f)/tanh", None,
     Location("/a/m.py", 7)),
    ('metadata={op_name="jit(f)/scope{a}/tanh" source_file="/a/{b}.py" source_line=3}', "jit(f)/scope{a}/tanh",
     None, Location("/a/{b}.py", 3)),
    ('metadata={op_name="jit(f)/x}y" stack_frame_id=4}', "jit(f)/x}y", 4, None),
    ('metadata={op_name="say \\"hi}\\" stack_frame_id=9" stack_frame_id=5}', 'say "hi}" stack_frame_id=9', 5, None),
    ("metadata={op_name=\"params[\\'w1\\']\" stack_frame_id=2}", "params['w1']", 2, None),
    ('backend_config={"a":{"b":1}}', "", None, None),
])
def test_metadata_fields(metadata: str, op_name: str, frame: int | None, source: Location | None) -> None:
    instruction = parse_instruction(SHAPE + metadata)
    assert instruction is not None
    assert (instruction.op_name, instruction.frame_id, instruction.source) == (op_name, frame, source)
    assert instruction.shape.arrays == (("f32", (8,)),) and instruction.operands == ("x",)


def test_shapes_are_shared_between_instructions_of_one_module() -> None:
    shapes: dict = {}
    a = parse_instruction("%a = f32[4,4]{1,0} add(%x, %y)", shapes)
    b = parse_instruction("%b = f32[4,4]{1,0} mul(%a, %a)", shapes)
    assert a is not None and b is not None and a.shape is b.shape and list(shapes) == ["f32[4,4]{1,0}"]


def test_narrow_float_types_count_their_own_bytes() -> None:
    """float8 and float4 HLO types were counted at 4 bytes an element (the unknown-type default)."""
    assert parse_shape("f8e4m3fn[8]{0}").nbytes == 8 and parse_shape("f8e5m2[4]{0}").nbytes == 4
    assert parse_shape("f4e2m1fn[8]{0}").nbytes == 4 and parse_shape("s4[8]{0}").nbytes == 4
