"""Shardings in argument specs: ``f32[64,128]@(data,None)`` and friends.

Syntax (after an array spec, ``@`` then a partition spec, one entry per leading dimension):

- ``@(data,None)``: ``PartitionSpec('data', None)``; ``@(data)`` or ``@data``: the first dimension only;
- ``@()``: replicated on every device;
- ``@((data,model),None)``: the first dimension split over both axes (data major).

Entries are axis names (bare or quoted) or None. Parsing needs no mesh; ``check_spec``
checks a spec against the mesh (axis names, rank, divisibility). Pure Python: the
``NamedSharding`` is built in :mod:`jitscope.load.mesh` (``to_sharding``), which owns the mesh.
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
