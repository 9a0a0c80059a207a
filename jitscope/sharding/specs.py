"""Shardings in argument specs: ``f32[64,128]@(data,None)`` and friends.

Syntax (after an array spec, ``@`` then a partition spec, one entry per leading dimension):

- ``@(data,None)``: ``PartitionSpec('data', None)``; ``@(data)`` or ``@data``: the first dimension only;
- ``@()``: replicated on every device;
- ``@((data,model),None)``: the first dimension split over both axes (data major).

Entries are axis names (bare or quoted) or None. Parsing needs no mesh; ``check_spec``
checks a spec against the mesh (axis names, rank, divisibility) and ``to_sharding`` builds
the ``NamedSharding``. Pure Python except ``to_sharding``.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Sequence
from typing import Any

from jitscope.errors import SpecError

#: One entry per dimension: None, an axis name, or several axis names (major first).
Partition = tuple[str | tuple[str, ...] | None, ...]


def parse_partition(node: ast.expr, error: Callable[[str, ast.AST], Exception]) -> Partition:
    """The right-hand side of ``@`` as a partition spec; ``error(message, node)`` makes the exception."""
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    return tuple(_entry(e, error, nested=False) for e in elts)


def _axis(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
        return node.value
    return None


def _entry(node: ast.expr, error: Callable[[str, ast.AST], Exception], *, nested: bool) -> Any:
    if isinstance(node, ast.Constant) and node.value is None and not nested:
        return None
    name = _axis(node)
    if name is not None:
        return name
    if isinstance(node, ast.Tuple) and not nested:
        names = tuple(_entry(e, error, nested=True) for e in node.elts)
        return names[0] if len(names) == 1 else names if names else None
    raise error(f"a sharding entry is an axis name, None or a tuple of axis names, not {ast.unparse(node)}", node)


def format_partition(partition: Partition) -> str:
    """``(data,None)``, ``((data,model),None)``, ``()``."""
    def entry(e: str | tuple[str, ...] | None) -> str:
        if e is None:
            return "None"
        return e if isinstance(e, str) else "(" + ",".join(e) + ")"

    return "(" + ",".join(entry(e) for e in partition) + ")"


def axes_of(entry: str | tuple[str, ...] | None) -> tuple[str, ...]:
    if entry is None:
        return ()
    return (entry,) if isinstance(entry, str) else tuple(entry)


def check_spec(shape: Sequence[int], partition: Partition, mesh_axes: dict[str, int], what: str) -> None:
    """One-line SpecError for an unknown axis, a spec longer than the rank, an axis used twice, or a
    dimension its axes do not divide."""
    names = ", ".join(f"{k}={v}" for k, v in mesh_axes.items())
    if len(partition) > len(shape):
        raise SpecError(f"{what}: sharding {format_partition(partition)} has {len(partition)} entries but the "
                        f"array has {len(shape)} dimension(s)", hint="one entry per dimension (trailing ones may "
                        "be left out)")
    used: set[str] = set()
    for dim, (size, entry) in enumerate(zip(shape, partition, strict=False)):
        axes = axes_of(entry)
        for axis in axes:
            if axis not in mesh_axes:
                raise SpecError(f"{what}: unknown mesh axis {axis!r} in {format_partition(partition)}",
                                hint=f"the mesh has {names}")
            if axis in used:
                raise SpecError(f"{what}: mesh axis {axis!r} is used twice in {format_partition(partition)}")
            used.add(axis)
        ways = math.prod(mesh_axes[a] for a in axes)
        if ways > 1 and size % ways:
            raise SpecError(f"{what}: dimension {dim} (size {size}) is not divisible by {ways} "
                            f"({'*'.join(axes)} in mesh {names})", hint="pick a size that is a multiple, or "
                            "shard that dimension over fewer devices")


def to_sharding(shape: Sequence[int], partition: Partition, mesh: Any, what: str) -> Any:
    """The ``NamedSharding`` for an array spec's partition on ``mesh`` (checked first)."""
    from jitscope.jaxcompat import sharding as jc

    check_spec(shape, partition, dict(jc.mesh_axes(mesh)), what)
    return jc.named_sharding(mesh, partition)


def no_mesh_error(what: str) -> SpecError:
    return SpecError(f"{what} has a sharding but no mesh is set up",
                     hint="pass --mesh NAME=SIZE,..., for example --mesh data=4, which on CPU also sets --devices")


def sharding_for(spec: Any) -> Any:
    """The ``NamedSharding`` of an ArraySpec with a partition, on the active mesh (``--mesh``).

    A spec from an example with a ``"mesh"`` key, or from a ``ShapeDtypeStruct``, remembers its
    mesh (``spec.mesh``): without ``--mesh`` that mesh is built over the devices here (the
    commands set it up first, ``mesh.example_mesh_scope``); ``--mesh`` overrides it.
    """
    from jitscope.jaxcompat import sharding as jc
    from jitscope.sharding.mesh import active_mesh, build_mesh, parse_mesh

    what = str(spec)
    mesh = active_mesh()
    # With --mesh, it wins: the spec's axes are checked against it, so an example can be tried on another mesh.
    if spec.mesh and mesh is None:
        wanted = parse_mesh(spec.mesh)
        if not jc.backends_initialized():  # on CPU, JAX can still be given the devices the example needs
            jc.request_cpu_devices(wanted.size)
        available = jc.devices()
        if len(available) < wanted.size:
            raise SpecError(f"{what} was declared on mesh {spec.mesh} ({wanted.size} devices), but JAX has "
                            f"{len(available)}", hint=f"pass --devices {wanted.size}")
        mesh = build_mesh(wanted, available[: wanted.size])
    if mesh is None:
        raise no_mesh_error(what)
    return to_sharding(spec.shape, spec.sharding, mesh, what)


def partition_of(sharding: Any) -> tuple[Partition | None, str]:
    """A ``ShapeDtypeStruct``'s (or array's) NamedSharding as (partition, mesh text); (None, "") otherwise."""
    if sharding is None:
        return None, ""
    from jitscope.jaxcompat import sharding as jc

    partition, mesh = jc.spec_entries(sharding), jc.sharding_mesh(sharding)
    if partition is None or mesh is None:
        return None, ""
    return partition, ",".join(f"{k}={v}" for k, v in jc.mesh_axes(mesh))


def on_mesh(argset: Any, mesh: Any, where: str) -> Any:
    """An example's ArgSet whose sharded specs are declared on ``mesh`` (its ``"mesh"`` key)."""
    import dataclasses

    from jitscope.errors import UsageError
    from jitscope.load.abstract import map_specs
    from jitscope.sharding.mesh import parse_mesh

    try:
        text = str(parse_mesh(str(mesh)))
    except UsageError as exc:
        raise SpecError(f"{where}: 'mesh' {mesh!r} is not NAME=SIZE,...", hint="for example \"data=4,model=2\"") from exc

    def place(spec: Any) -> Any:
        return dataclasses.replace(spec, mesh=text) if spec.sharding is not None and not spec.mesh else spec

    args, kwargs = map_specs(argset, place)
    return dataclasses.replace(argset, args=args, kwargs=kwargs)
