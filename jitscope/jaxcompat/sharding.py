"""Devices, meshes and shardings across JAX versions: the one place that knows where they live.

- The CPU device count: ``jax_num_cpu_devices`` (JAX >= 0.5) or, before it existed, the
  XLA flag ``--xla_force_host_platform_device_count``; both only work before JAX
  initialises its backends (``xla_bridge.backends_are_initialized``, private).
- ``Mesh`` takes ``axis_types`` from JAX 0.5; from 0.7 ``jax.make_mesh`` defaults to
  Explicit axes, which change what tracing means (sharding in types). jitscope builds Auto
  meshes, the classic GSPMD behaviour every JAX version shares.
- The mesh context for bare ``PartitionSpec``\\ s: ``jax.set_mesh`` where it exists, else
  ``with mesh:``.
- What a ``jax.jit`` wrapper declared as ``in_shardings``/``out_shardings`` (``PjitInfo``, private).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

#: The XLA flag that gives the CPU backend N virtual devices.
CPU_DEVICES_FLAG = "--xla_force_host_platform_device_count"
_FLAG = re.compile(re.escape(CPU_DEVICES_FLAG) + r"=\d+")

#: A partition spec as plain data: one entry per dimension, None, an axis name or a tuple of axis names.
SpecEntry = str | tuple[str, ...] | None


def backends_initialized() -> bool:
    """True once JAX has created its backends (the device count is fixed from then on)."""
    try:
        from jax._src import xla_bridge
    except ImportError:  # pragma: no cover - moved: assume the worst so we never silently do nothing
        return True
    probe = getattr(xla_bridge, "backends_are_initialized", None)
    if probe is None:  # pragma: no cover
        return bool(getattr(xla_bridge, "_backends", {}))
    return bool(probe())


def request_cpu_devices(n: int) -> None:
    """Ask for ``n`` CPU devices; only effective before the backends are initialised."""
    import jax

    try:
        jax.config.update("jax_num_cpu_devices", n)
        return
    except (AttributeError, KeyError, ValueError):  # JAX < 0.5: no such option; the XLA flag works everywhere
        pass
    flags = _FLAG.sub("", os.environ.get("XLA_FLAGS", "")).strip()
    os.environ["XLA_FLAGS"] = f"{flags} {CPU_DEVICES_FLAG}={n}".strip()


def devices() -> list[Any]:
    import jax

    return list(jax.devices())


def make_mesh(shape: Sequence[int], names: Sequence[str], device_list: Sequence[Any]) -> Any:
    """A named ``Mesh`` over ``device_list`` (row-major), with Auto axes where JAX has axis types."""
    import jax.sharding
    import numpy as np
    from jax.sharding import Mesh

    grid = np.array(list(device_list), dtype=object).reshape(tuple(shape))
    axis_type = getattr(getattr(jax.sharding, "AxisType", None), "Auto", None)
    if axis_type is not None:
        try:
            return Mesh(grid, tuple(names), axis_types=(axis_type,) * len(names))
        except TypeError:  # pragma: no cover - a JAX with AxisType but no axis_types argument
            pass
    return Mesh(grid, tuple(names))


def named_sharding(mesh: Any, spec: Sequence[SpecEntry]) -> Any:
    from jax.sharding import NamedSharding, PartitionSpec

    return NamedSharding(mesh, PartitionSpec(*spec))


@contextlib.contextmanager
def mesh_context(mesh: Any) -> Iterator[None]:
    """Make ``mesh`` the context mesh while tracing, so bare PartitionSpecs in the user's code resolve."""
    if mesh is None:
        yield
        return
    import jax

    set_mesh = getattr(jax, "set_mesh", None) or getattr(jax.sharding, "use_mesh", None)
    manager = set_mesh(mesh) if set_mesh is not None else mesh
    with manager:
        yield


def mesh_axes(mesh: Any) -> tuple[tuple[str, int], ...]:
    """``(("data", 4), ("model", 2))`` for a Mesh (or an AbstractMesh)."""
    return tuple((str(name), int(size)) for name, size in dict(mesh.shape).items())


def spec_entries(sharding: Any) -> tuple[SpecEntry, ...] | None:
    """A NamedSharding's PartitionSpec as plain data, or None for another kind of sharding."""
    spec = getattr(sharding, "spec", None)
    if spec is None or getattr(sharding, "mesh", None) is None:
        return None
    out: list[SpecEntry] = []
    for entry in tuple(spec):
        if entry is None:
            out.append(None)
        elif isinstance(entry, (tuple, list)):
            names = tuple(str(e) for e in entry)
            out.append(names if len(names) != 1 else names[0])
        else:
            out.append(str(entry))
    return tuple(out)


def sharding_mesh(sharding: Any) -> Any | None:
    """The mesh of a NamedSharding, or None."""
    return getattr(sharding, "mesh", None) if getattr(sharding, "spec", None) is not None else None


def shard_shape(sharding: Any, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The block of ``shape`` each device holds under ``sharding``, as JAX computes it (any kind of sharding,
    uneven splits included); None where the sharding cannot say. The one place a block shape is worked out."""
    try:
        return tuple(int(d) for d in sharding.shard_shape(tuple(shape)))
    except Exception:  # noqa: BLE001 - a sharding that cannot say (uneven, unknown kind)
        return None


def is_fully_replicated(sharding: Any) -> bool:
    return bool(getattr(sharding, "is_fully_replicated", False))


def _unspecified(value: Any) -> bool:
    return type(value).__name__ in ("UnspecifiedValue", "AUTO") or value is None


def declared_shardings(info: Any) -> tuple[Any, Any]:
    """The ``(in_shardings, out_shardings)`` a jit wrapper was given (its ``PjitInfo``); None where not given."""
    from jax.tree_util import tree_unflatten

    def rebuild(leaves_name: str, tree_name: str) -> Any:
        leaves, treedef = getattr(info, leaves_name, None), getattr(info, tree_name, None)
        if leaves is None or treedef is None or all(_unspecified(leaf) for leaf in leaves):
            return None
        try:
            return tree_unflatten(treedef, list(leaves))
        except Exception:  # noqa: BLE001 - a PjitInfo of another shape: behave as if nothing was declared
            return None

    if info is None:
        return None, None
    return (rebuild("in_shardings_leaves", "in_shardings_treedef"),
            rebuild("out_shardings_leaves", "out_shardings_treedef"))


def compiled_leaves(compiled: Any, lowered: Any) -> tuple[list[tuple[str, Any, Any]], list[tuple[str, Any, Any]]]:
    """``(path, aval-like, sharding)`` for every input and output leaf of a compiled program.

    Inputs pair ``compiled.args_info`` (global avals) with ``compiled.input_shardings``;
    outputs pair ``out_info`` (on Compiled from JAX 0.5, on Lowered before) with
    ``compiled.output_shardings``. Paths are JAX key paths (``[0]['w']``).
    """
    from jax.tree_util import keystr, tree_flatten_with_path, tree_leaves

    def pair(infos: Any, shardings: Any) -> list[tuple[str, Any, Any]]:
        flat = tree_flatten_with_path(infos, is_leaf=lambda x: hasattr(x, "shape") or hasattr(x, "_aval"))[0]
        shard_leaves = tree_leaves(shardings, is_leaf=lambda x: hasattr(x, "shard_shape"))
        out = []
        for (path, info), sharding in zip(flat, shard_leaves, strict=False):
            aval = next((a for a in (getattr(info, "_aval", None), getattr(info, "aval", None)) if a is not None),
                        info)  # never `or`: a 0-d aval has no truth value
            out.append((keystr(path), aval, sharding))
        return out

    try:
        inputs = pair(compiled.args_info, compiled.input_shardings)
    except Exception:  # noqa: BLE001 - an executable that cannot say
        inputs = []
    out_info = getattr(compiled, "out_info", None)
    if out_info is None:
        out_info = getattr(lowered, "out_info", None)
    try:
        outputs = pair(out_info, compiled.output_shardings) if out_info is not None else []
    except Exception:  # noqa: BLE001
        outputs = []
    return inputs, outputs


def raw_compiled_text(compiled: Any) -> str:
    """The optimised HLO with XLA's stack-frame tables kept (newer XLA puts source lines only there)."""
    try:
        return str(compiled.as_text() or "")
    except Exception:  # noqa: BLE001
        return ""


def executable_device_count(compiled: Any) -> int:
    """How many devices a compiled program runs on, across every process (1 for an ordinary jit).

    The shardings' device sets are global (``jax.distributed``); the executable's devices are
    only this process's, so they are the fallback.
    """
    from jax.tree_util import tree_leaves

    try:
        shardings = [*tree_leaves(compiled.input_shardings), *tree_leaves(compiled.output_shardings)]
        sizes = [len(s.device_set) for s in shardings if hasattr(s, "device_set")]
    except Exception:  # noqa: BLE001 - an executable that cannot say: ask the runtime
        sizes = []
    if sizes:
        return max(sizes)
    try:
        return len(compiled.runtime_executable().local_devices())
    except Exception:  # noqa: BLE001
        return 1
