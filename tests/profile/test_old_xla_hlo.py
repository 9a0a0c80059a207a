"""HLO of older XLA (JAX 0.4.38-0.6.x): one source line per instruction, and reduce-windows without any."""

from __future__ import annotations

from jitscope.profiling.hlo import parse_module
from jitscope.profiling.hlo_work import fed_reduce_stack

# As XLA's CPU compiler of JAX 0.5.3 leaves ``jnp.mean`` twice: the tree-reduction rewrite's reduce-window
# has no metadata; the parallel task assigner moved one into a computation run by a call, and the second
# mean's reduce was fused into the fusion that reads it.
HLO = """HloModule jit_layer, entry_computation_layout={(f32[256,512]{1,0})->f32[256]{1,0}}

%region_0 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %add.0 = f32[] add(%a, %b)
}

%parallel_reduce-window (p: f32[256,512], p.1: f32[]) -> f32[256,16] {
  %p = f32[256,512]{1,0} parameter(0)
  %p.1 = f32[] parameter(1)
  ROOT %reduce-window.clone = f32[256,16]{1,0} reduce-window(%p, %p.1), window={size=1x32 stride=1x32}, to_apply=%region_0
}

%fused_computation (param_0: f32[256,16], param_1: f32[]) -> f32[256] {
  %param_0 = f32[256,16]{1,0} parameter(0)
  %param_1 = f32[] parameter(1)
  ROOT %reduce.7 = f32[256]{0} reduce(%param_0, %param_1), dimensions={1}, to_apply=%region_0, metadata={op_name="jit(layer)/reduce_sum" source_file="/proj/model.py" source_line=12}
}

ENTRY %main (x: f32[256,512]) -> f32[256] {
  %x = f32[256,512]{1,0} parameter(0), metadata={op_name="x"}
  %constant.10 = f32[] constant(0)
  %call = f32[256,16]{1,0} call(%x, %constant.10), to_apply=%parallel_reduce-window
  %reduce.23 = f32[256]{0} reduce(%call, %constant.10), dimensions={1}, to_apply=%region_0, metadata={op_name="jit(layer)/reduce_sum" source_file="/proj/model.py" source_line=11}
  %reduce-window.1 = f32[256,16]{1,0} reduce-window(%x, %constant.10), window={size=1x32 stride=1x32}, to_apply=%region_0
  %fusion = f32[256]{0} fusion(%reduce-window.1, %constant.10), kind=kLoop, calls=%fused_computation
  ROOT %add.9 = f32[256]{0} add(%reduce.23, %fusion), metadata={op_name="jit(layer)/add" source_file="/proj/model.py" source_line=13}
}
"""


def test_a_reduce_window_without_metadata_is_its_reduces_line():
    module = parse_module(HLO)
    instructions = module.instructions()
    moved = instructions["reduce-window.clone"][0]
    assert module.stack(moved) == ()
    assert [loc.line for loc in fed_reduce_stack(moved, module)] == [11]  # through the call that runs it
    fused = instructions["reduce-window.1"][0]
    assert [loc.line for loc in fed_reduce_stack(fused, module)] == [12]  # the reduce fused into its reader


def test_other_instructions_without_metadata_stay_without_a_line():
    module = parse_module(HLO)
    instructions = module.instructions()
    assert fed_reduce_stack(instructions["call"][0], module) == ()
    assert fed_reduce_stack(instructions["constant.10"][0], module) == ()
