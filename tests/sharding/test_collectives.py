"""The HLO-text reader and the traffic arithmetic, on fixed text in the forms different XLA versions print."""

from __future__ import annotations

from jitscope.model.sharding import Collective
from jitscope.sharding.analyse import group_axes, sharding_warnings, traffic, traffic_by_line
from jitscope.sharding.collectives import iota_groups, parse_groups, parse_hlo

HLO = '''HloModule jit_step, is_scheduled=true, num_partitions=8

FileNames
1 "/usr/lib/python3/site-packages/jax/_src/api.py"
2 "/home/me/train.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=2 function_name_id=1 line=7 end_line=7 column=1 end_column=1}
2 {file_name_id=1 function_name_id=1 line=99 end_line=99 column=1 end_column=1}
3 {file_name_id=2 function_name_id=1 line=12 end_line=12 column=1 end_column=1}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=1}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add.1 = f32[] add(%x, %y)
}

%body (p: (s32[], f32[16,64])) -> (s32[], f32[16,64]) {
  %p = (s32[], f32[16,64]{1,0}) parameter(0)
  %gte = f32[16,64]{1,0} get-tuple-element(%p), index=1
  %all-gather-start = (f32[16,64]{1,0}, f32[64,64]{1,0}) all-gather-start(%gte), channel_id=3, replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}, use_global_device_ids=true, metadata={op_name="jit(f)/while/body/dot_general" stack_frame_id=3}
  %all-gather-done = f32[64,64]{1,0} all-gather-done(%all-gather-start), metadata={op_name="jit(f)/while/body/dot_general" stack_frame_id=3}
  ROOT %t = (s32[], f32[16,64]{1,0}) tuple(%gte, %gte)
}

%cond (p.1: (s32[], f32[16,64])) -> pred[] {
  %p.1 = (s32[], f32[16,64]{1,0}) parameter(0)
  ROOT %c = pred[] constant(true)
}

ENTRY %main (param.1: f32[16,128], param.2: f32[128,64]) -> f32[16,64] {
  %param.1 = f32[16,128]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}, metadata={op_name="x"}
  %param.2 = f32[128,64]{1,0} parameter(1), sharding={replicated}, metadata={op_name="params[\\'w\\']"}
  %copy = f32[16,128]{1,0} copy(%param.1)
  %all-to-all = f32[16,128]{1,0} all-to-all(%copy), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, dimensions={0}, metadata={op_name="jit(f)/transpose" source_file="/home/me/train.py" source_line=5}
  %dot = f32[16,64]{1,0} dot(%all-to-all, %param.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %all-reduce = (f32[16,64]{1,0}, f32[8]{0}) all-reduce(%dot, %dot), channel_id=2, replica_groups=mesh['axis_0'=4,'axis_1'=2] {'axis_1'}, use_global_device_ids=true, to_apply=%add, metadata={op_name="jit(f)/dot_general" stack_frame_id=3}
  %cp = f32[16,64]{1,0} collective-permute(%dot), channel_id=4, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}, metadata={op_name="jit(f)/shard_map/ppermute" stack_frame_id=2}
  %tuple = (s32[], f32[16,64]{1,0}) tuple(%dot, %dot)
  %while = (s32[], f32[16,64]{1,0}) while(%tuple), condition=%cond, body=%body
  ROOT %r = f32[16,64]{1,0} get-tuple-element(%while), index=1
}
'''


def _user(path: str) -> bool:
    return "site-packages" not in path


def test_every_collective_form_is_read() -> None:
    module = parse_hlo(HLO, _user)
    by_kind = {c.kind: c for c in module.collectives}
    assert sorted(by_kind) == ["all-gather", "all-reduce", "all-to-all", "collective-permute"]
    gather = by_kind["all-gather"]  # an async pair, counted once with the -done's result
    assert (gather.name, gather.is_async, gather.in_loop, gather.shape) == ("all-gather-start", True, True, (64, 64))
    assert gather.groups == ((0, 2, 4, 6), (1, 3, 5, 7)) and (gather.file, gather.line) == ("/home/me/train.py", 12)
    a2a = by_kind["all-to-all"]
    assert a2a.groups == ((0, 1, 2, 3), (4, 5, 6, 7)) and (a2a.file, a2a.line) == ("/home/me/train.py", 5)
    assert module.parameter_of(a2a.operand) == "x"  # through the copy, to the parameter's name
    reduce = by_kind["all-reduce"]
    assert reduce.mesh_axes == (1,) and reduce.arrays == 2 and reduce.result_bytes == 16 * 64 * 4 + 8 * 4
    permute = by_kind["collective-permute"]
    assert permute.groups == ((0, 1), (1, 2), (2, 3), (3, 0))
    # frame 2 is inside JAX: its parent (XLA prints parent ids one too high) is the user's line
    assert (permute.file, permute.line) == ("/home/me/train.py", 7)
    assert module.parameters == {"param.1": "x", "param.2": "params['w']"}


def test_replica_group_forms() -> None:
    assert iota_groups(2, 4, (4, 2), (1, 0)) == ((0, 2, 4, 6), (1, 3, 5, 7))
    assert parse_groups("replica_groups=[1,8]<=[8], x") == ((0, 1, 2, 3, 4, 5, 6, 7),)
    assert parse_groups("replica_groups={{0,1},{2,3}}") == ((0, 1), (2, 3))
    assert parse_groups("replica_groups={}") == ()


def test_groups_map_to_mesh_axes() -> None:
    axes = (("data", 4), ("model", 2))
    assert group_axes(((0, 2, 4, 6), (1, 3, 5, 7)), axes) == ("data",)
    assert group_axes(((0, 1), (2, 3), (4, 5), (6, 7)), axes) == ("model",)
    assert group_axes((tuple(range(8)),), axes) == ("data", "model")


def test_traffic_formulas() -> None:
    b = 1024
    assert traffic("all-reduce", b, 8) == (1792, 1792)  # 2 * 7/8 * B
    assert traffic("all-gather", b, 4) == (768, 768)  # 3/4 * B (B = the gathered result)
    assert traffic("reduce-scatter", b, 4) == (3072, 3072)  # 3/4 * (4 * B): B is the scattered result
    assert traffic("all-to-all", b, 2) == (512, 512)
    assert traffic("collective-permute", b, 2) == (1024, 1024)
    assert traffic("all-reduce", b, 1) == (0, 0)


def _collective(kind: str, line: int, send: int, **kw: object) -> Collective:
    return Collective(kind=kind, name=kind, dtype="f32", shape=(4,), group_size=2, groups=1, axes=("data",),
                      send_bytes=send, recv_bytes=send, file="/home/me/train.py", line=line, **kw)  # type: ignore[arg-type]


def test_traffic_by_line_sums_and_sorts() -> None:
    rows = traffic_by_line((_collective("all-reduce", 3, 10), _collective("all-gather", 5, 100),
                            _collective("all-reduce", 3, 20)))
    assert [(r.line, r.count, r.send_bytes, r.kinds) for r in rows] == [
        (5, 1, 100, ("all-gather",)), (3, 2, 30, ("all-reduce",))]


def test_warnings_skip_collectives_the_user_asked_for() -> None:
    asked = _collective("all-gather", 3, 10, op_name="jit(f)/sharding_constraint", on_parameter="x")
    unasked = _collective("all-gather", 4, 10, op_name="jit(f)/cumsum", on_parameter="x")
    in_loop = _collective("all-gather", 5, 10, op_name="jit(f)/while/body/dot_general", in_loop=True)
    kinds = [w.kind for w in sharding_warnings((), (), (asked, unasked, in_loop), 8)]
    assert kinds == ["gather-in-loop", "resharded"]
