"""A compiled sharded program -> ``ShardingRecord``: layouts, collectives, traffic per line, warnings.

``ShardingProbe`` is handed to ``tracing.compile.lower_and_compile``, which calls it with the
Lowered and Compiled stages; it keeps a record only for programs that run on more than one
device or whose arguments were given shardings, so ordinary traces are unchanged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from jitscope.jaxcompat.values import short_dtype
from jitscope.load.abstract import map_specs
from jitscope.load.partition import Partition, format_partition
from jitscope.load.specs import ArgSet, ArraySpec
from jitscope.model.sharding import (
    Collective,
    LeafSharding,
    LineTraffic,
    MeshRecord,
    ShardingRecord,
    ShardingWarning,
)

if TYPE_CHECKING:
    from jitscope.sharding.collectives import HloCollective, ModuleCollectives

#: An input at least this large (bytes, global) that every device holds whole is worth a warning.
REPLICATED_WARN_BYTES = 8 << 20


@dataclass
class ShardingProbe:
    """Called with (lowered, compiled) by ``lower_and_compile``; ``record`` is None for one-device programs."""

    argset: ArgSet
    #: Argument leaf names in JAX's flattening order (the traced ones of ``TraceRecord.seen``).
    names: tuple[str, ...] = ()
    record: ShardingRecord | None = None

    def __call__(self, lowered: Any, compiled: Any) -> None:
        self.record = analyse_compiled(lowered, compiled, self.argset, self.names)


def _requested(argset: ArgSet) -> dict[str, Partition | None]:
    """Key path (as JAX prints it, ``[0][1]['w']``) -> the partition asked for in the spec."""
    from jax.tree_util import keystr, tree_flatten_with_path

    args, kwargs = map_specs(argset, lambda spec: spec)
    dynamic = {k: v for k, v in kwargs.items() if k not in argset.static_names}
    flat = tree_flatten_with_path((args, dynamic), is_leaf=lambda x: isinstance(x, ArraySpec))[0]
    return {keystr(path): leaf.sharding for path, leaf in flat if isinstance(leaf, ArraySpec)}


def _strip(partition: Partition) -> Partition:
    out = list(partition)
    while out and out[-1] is None:
        out.pop()
    return tuple(out)


def _leaf(path: str, role: Literal["input", "output"], aval: Any, sharding: Any,
          requested: Partition | None) -> LeafSharding:
    from jitscope.jaxcompat import sharding as jc

    shape = tuple(int(d) for d in getattr(aval, "shape", ()))
    dtype = short_dtype(getattr(aval, "dtype", ""))
    itemsize = getattr(getattr(aval, "dtype", None), "itemsize", None) or 4
    partition = jc.spec_entries(sharding)
    block = jc.shard_shape(sharding, shape) or shape
    spec = format_partition(_strip(partition)) if partition is not None else ""
    asked = ""
    if requested is not None and (partition is None or _strip(requested) != _strip(partition)):
        asked = format_partition(_strip(requested))
    return LeafSharding(
        path=path, role=role, dtype=dtype, shape=shape, spec=spec, shard_shape=block,
        shard_bytes=math.prod(block) * itemsize, global_bytes=math.prod(shape) * itemsize,
        replicated=jc.is_fully_replicated(sharding), requested=asked)


def _mesh_record(mesh: Any) -> MeshRecord | None:
    if mesh is None:
        return None
    from jitscope.jaxcompat import sharding as jc

    grid = getattr(mesh, "devices", None)
    devices = list(grid.flat) if grid is not None else []
    first = devices[0] if devices else None
    return MeshRecord(jc.mesh_axes(mesh), getattr(first, "platform", ""), getattr(first, "device_kind", ""))


def group_axes(groups: tuple[tuple[int, ...], ...], axes: tuple[tuple[str, int], ...]) -> tuple[str, ...]:
    """The mesh axes along which the devices of each group differ (device id i = row-major mesh position i)."""
    if not groups or not axes:
        return tuple(name for name, size in axes if size > 1) if not groups else ()
    sizes = [size for _, size in axes]
    varying: set[int] = set()
    for group in groups:
        coords = [_unravel(i, sizes) for i in group]
        for dim in range(len(sizes)):
            if len({c[dim] for c in coords}) > 1:
                varying.add(dim)
    return tuple(axes[d][0] for d in sorted(varying))


def _unravel(index: int, sizes: list[int]) -> tuple[int, ...]:
    out = []
    for size in reversed(sizes):
        out.append(index % size)
        index //= size
    return tuple(reversed(out))


def traffic(kind: str, result_bytes: int, n: int) -> tuple[int, int]:
    """Bytes one device sends and receives (``model.sharding.TRAFFIC_FORMULAS``)."""
    if n <= 1:
        return 0, 0
    if kind == "all-reduce":
        each = 2 * (n - 1) * result_bytes / n
    elif kind == "reduce-scatter":
        each = (n - 1) * result_bytes  # operand = n x result: (n-1)/n * n * result
    elif kind in ("all-gather", "all-to-all"):
        each = (n - 1) * result_bytes / n
    else:  # collective-permute, collective-broadcast
        each = result_bytes
    return round(each), round(each)


def _collective(hc: HloCollective, axes: tuple[tuple[str, int], ...], devices: int, module: ModuleCollectives) -> Collective:
    if hc.mesh_axes is not None:
        involved = tuple(axes[i][0] for i in hc.mesh_axes if i < len(axes))
        n = math.prod(axes[i][1] for i in hc.mesh_axes if i < len(axes))
        groups = devices // n if n else 0
    elif hc.kind == "collective-permute":
        involved, n, groups = group_axes(hc.groups, axes), 2, len(hc.groups)
    else:
        involved = group_axes(hc.groups, axes) if hc.groups else tuple(name for name, size in axes if size > 1)
        n = len(hc.groups[0]) if hc.groups else devices
        groups = len(hc.groups) or 1
    send, recv = traffic(hc.kind, hc.result_bytes, n)
    return Collective(
        kind=hc.kind, name=hc.name, dtype=hc.dtype, shape=hc.shape, group_size=n, groups=groups, axes=involved,
        send_bytes=send, recv_bytes=recv, is_async=hc.is_async, in_loop=hc.in_loop, file=hc.file, line=hc.line,
        op_name=hc.op_name, on_parameter=module.parameter_of(hc.operand) or "", arrays=hc.arrays)


def traffic_by_line(collectives: tuple[Collective, ...]) -> tuple[LineTraffic, ...]:
    """Collectives grouped by the user's source line, most bytes first."""
    groups: dict[tuple[str, int], list[Collective]] = defaultdict(list)
    for c in collectives:
        groups[(c.file, c.line)].append(c)
    rows = [LineTraffic(file, line, len(cs), sum(c.send_bytes for c in cs), sum(c.recv_bytes for c in cs),
                        tuple(dict.fromkeys(c.kind for c in cs)), _source_line(file, line))
            for (file, line), cs in groups.items()]
    return tuple(sorted(rows, key=lambda r: (-r.send_bytes - r.recv_bytes, r.file, r.line)))


def _source_line(file: str, line: int) -> str:
    import linecache

    return linecache.getline(file, line).strip() if file and line else ""


#: HLO instruction names XLA derives from JAX's collective primitives (written by the user, in shard_map).
_EXPLICIT_PREFIXES = ("ppermute", "psum", "pmax", "pmin", "all_gather", "all_to_all", "reduce_scatter", "pbroadcast")


def is_requested(c: Collective) -> bool:
    """True for a collective the user asked for (or may have): written in shard_map, a sharding constraint,
    or, with no op path in its metadata, the layout change to jit's declared out_shardings at the end of the
    program (newer XLA gives a gather of a parameter the parameter's own name: it cannot be told apart)."""
    return ("jit(" not in c.op_name or "shard_map" in c.op_name or "sharding_constraint" in c.op_name
            or c.name.startswith(_EXPLICIT_PREFIXES) or any(f"/{p}" in c.op_name for p in _EXPLICIT_PREFIXES))


def sharding_warnings(inputs: tuple[LeafSharding, ...], outputs: tuple[LeafSharding, ...],
                      collectives: tuple[Collective, ...], devices: int) -> tuple[ShardingWarning, ...]:
    """The usual mistakes: big replicated inputs, gathers in loop bodies, layouts changed behind the user's back."""
    from jitscope.units import fmt_bytes

    out: list[ShardingWarning] = []
    if inputs and all(leaf.replicated or devices <= 1 for leaf in inputs):
        where = "the program runs on one device" if devices <= 1 else (
            f"each of the {devices} devices holds every argument whole and computes the same thing")
        out.append(ShardingWarning("nothing-sharded", (
            f"no argument is sharded: {where}; shard one in its spec (e.g. f32[64,128]@(data,None)) or declare "
            "jit's in_shardings")))
    elif devices > 1:
        for leaf in inputs:
            if leaf.replicated and leaf.global_bytes >= REPLICATED_WARN_BYTES:
                out.append(ShardingWarning("replicated", (
                    f"{leaf.path} ({leaf.dtype}[{','.join(map(str, leaf.shape))}], {fmt_bytes(leaf.global_bytes)}) "
                    f"is fully replicated: each of the {devices} devices holds all of it; shard it over a mesh "
                    "axis (e.g. @(data,None)) unless every device really needs it whole")))
    for c in collectives:
        if c.kind == "all-gather" and c.in_loop:
            out.append(ShardingWarning("gather-in-loop", (
                f"{c.name} gathers {c.dtype}[{','.join(map(str, c.shape))}] over {','.join(c.axes) or 'all devices'} "
                "inside a loop body, on every iteration: if it is a loop-invariant parameter, gather it once before "
                "the loop (FSDP-style per-layer gathers do this on purpose)"), c.file, c.line))
    for leaf in (*inputs, *outputs):
        if leaf.requested:
            out.append(ShardingWarning("resharded", (
                f"{leaf.role} {leaf.path} was asked to be {leaf.requested} but the compiled program uses "
                f"{leaf.spec or 'another sharding'}: JAX reshards it on every call")))
    for c in collectives:
        if (c.on_parameter and c.kind in ("all-gather", "all-to-all", "collective-permute") and not c.in_loop
                and not is_requested(c)):
            out.append(ShardingWarning("resharded", (
                f"{c.kind} of input {c.on_parameter} ({c.name}): the partitioner changed its layout before using it; "
                "if that is not what you meant, give it the sharding the computation needs"), c.file, c.line))
    return tuple(out)


def analyse_compiled(lowered: Any, compiled: Any, argset: ArgSet, names: tuple[str, ...] = ()) -> ShardingRecord | None:
    """The ShardingRecord of a compiled program, or None for an unsharded one-device program."""
    from jitscope.jaxcompat import sharding as jc
    from jitscope.load.mesh import active_mesh
    from jitscope.sharding.collectives import parse_hlo  # the HLO reader: only for sharded programs
    from jitscope.userframes import is_user_file

    devices = jc.executable_device_count(compiled)
    requested = _requested(argset)
    if devices <= 1 and all(p is None for p in requested.values()) and active_mesh() is None:
        return None
    raw_inputs, raw_outputs = jc.compiled_leaves(compiled, lowered)
    mesh = next((m for m in (jc.sharding_mesh(s) for _, _, s in (*raw_inputs, *raw_outputs)) if m is not None),
                active_mesh())
    use_names = len(names) == len(raw_inputs)
    inputs = tuple(_leaf(names[i] if use_names else path, "input", aval, sharding, requested.get(path))
                   for i, (path, aval, sharding) in enumerate(raw_inputs))
    outputs = tuple(_leaf(f"out{path}", "output", aval, sharding, None) for path, aval, sharding in raw_outputs)
    mesh_record = _mesh_record(mesh)
    axes = mesh_record.axes if mesh_record is not None else ()
    module = parse_hlo(jc.raw_compiled_text(compiled), is_user_file)
    collectives = tuple(_collective(hc, axes, devices, module) for hc in module.collectives)
    return ShardingRecord(mesh=mesh_record, devices=devices, inputs=inputs, outputs=outputs, collectives=collectives,
                          by_line=traffic_by_line(collectives),
                          warnings=sharding_warnings(inputs, outputs, collectives, devices))
