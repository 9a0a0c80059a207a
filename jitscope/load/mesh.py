"""``--devices N`` and ``--mesh data=4,model=2``: devices set up before JAX starts, and the active mesh.

The device count of the CPU backend is fixed when JAX initialises its backends, so
``--devices`` must be applied before anything asks JAX for a device: each command does it
first thing (``mesh_scope``), before loading the user's module. The mesh is then built
over the first ``prod(sizes)`` devices and is *active* for the duration of the command:
argument specs with shardings (``f32[64,128]@(data,None)``) are placed on it, and the
user's code sees it as the context mesh while it is traced.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from jitscope.errors import SpecError, UsageError
from jitscope.load.partition import Partition, check_spec

_AXIS = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\d+)\s*$")

#: The live ``jax.sharding.Mesh`` of the running command, or None.
_ACTIVE: contextvars.ContextVar[Any | None] = contextvars.ContextVar("jitscope_mesh", default=None)


@dataclass(frozen=True, slots=True)
class MeshSpec:
    """A mesh as the user wrote it: ordered (axis name, size) pairs."""

    axes: tuple[tuple[str, int], ...]

    @property
    def size(self) -> int:
        return math.prod(size for _, size in self.axes)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.axes)

    def __str__(self) -> str:
        return ",".join(f"{name}={size}" for name, size in self.axes)


def parse_mesh(text: str) -> MeshSpec:
    """``"data=4,model=2"`` -> MeshSpec; one-line UsageError otherwise."""
    axes: list[tuple[str, int]] = []
    for part in text.split(","):
        match = _AXIS.match(part)
        if match is None:
            raise UsageError(f"bad --mesh {text!r}: {part.strip() or '(empty)'!r} is not NAME=SIZE",
                             hint="for example --mesh data=4,model=2")
        name, size = match.group(1), int(match.group(2))
        if size < 1:
            raise UsageError(f"bad --mesh {text!r}: axis {name} has size 0", hint="sizes are at least 1")
        if name in dict(axes):
            raise UsageError(f"bad --mesh {text!r}: axis {name} is named twice")
        axes.append((name, size))
    return MeshSpec(tuple(axes))


#: The most virtual CPU devices jitscope asks JAX for (``--devices``, ``--mesh``): XLA starts threads per
#: device, so 100,000 runs for minutes and 32,768 hits the process's thread limit; 1,024 starts in seconds.
MAX_VIRTUAL_DEVICES = 1024


def active_mesh() -> Any | None:
    """The mesh set up by ``--mesh`` for this command (a live ``jax.sharding.Mesh``), or None."""
    return _ACTIVE.get()


def setup_devices(n: int) -> list[Any]:
    """Make sure JAX presents (at least) ``n`` devices and return the first ``n``.

    On CPU, JAX is asked for ``n`` virtual devices; that only works before its backends
    start. On GPU/TPU the real devices are used, and ``n`` must not exceed them.
    """
    from jitscope.jaxcompat import sharding as jc

    if n < 1:
        raise UsageError(f"--devices must be at least 1, got {n}")
    if not jc.backends_initialized():  # on a GPU/TPU the real devices count, not these
        from jitscope.jaxcompat.distributed import local_share

        # n is the devices of the whole mesh; in a jax.distributed program each process brings its share
        jc.request_cpu_devices(min(local_share(n), MAX_VIRTUAL_DEVICES))
    available = jc.devices()
    if len(available) >= n:
        return available[:n]
    platform = available[0].platform if available else "cpu"
    if platform == "cpu" and n > MAX_VIRTUAL_DEVICES:
        raise UsageError(f"{n:,} devices asked for (--devices/--mesh): at most {MAX_VIRTUAL_DEVICES:,} virtual "
                         "CPU devices",
                         hint="XLA starts threads per device (32,768 hits the thread limit); inspect the same "
                         "axes scaled down, e.g. --mesh data=8,model=4")
    if platform == "cpu":
        raise UsageError(
            f"--devices {n}: JAX already started with {len(available)} CPU device(s), too late to ask for {n}",
            hint=f"JAX started before jitscope could ask (code run at import, or XLA_FLAGS); start the process "
            f"with XLA_FLAGS={jc.CPU_DEVICES_FLAG}={n}",
        )
    raise UsageError(f"--devices {n}: only {len(available)} {platform} device(s) here",
                     hint=f"pass --devices {len(available)} or fewer")


def build_mesh(spec: MeshSpec, devices: list[Any]) -> Any:
    """The named mesh over ``devices`` (their count must equal the mesh's size)."""
    from jitscope.jaxcompat import sharding as jc

    if spec.size != len(devices):
        raise UsageError(f"--mesh {spec} needs {spec.size} devices, but {len(devices)} are in use",
                         hint=f"pass --devices {spec.size}, or axis sizes whose product is {len(devices)}")
    return jc.make_mesh([size for _, size in spec.axes], spec.names, devices)


@contextlib.contextmanager
def mesh_scope(devices: int | None, mesh: str | None) -> Iterator[Any | None]:
    """Apply ``--devices`` and ``--mesh`` for the duration of a command; yields the mesh (or None).

    ``--mesh`` alone implies ``--devices`` = the mesh's size. Call this before loading the
    user's module: the CPU device count can only be set before JAX initialises.
    """
    from jitscope.jaxcompat.sharding import mesh_context

    spec = parse_mesh(mesh) if mesh is not None else None
    if devices is None and spec is None:
        yield None
        return
    count = devices if devices is not None else spec.size if spec is not None else 1
    used = setup_devices(count)
    live = build_mesh(spec, used) if spec is not None else None
    token = _ACTIVE.set(live)
    try:
        with mesh_context(live):  # bare PartitionSpecs in the user's code resolve against it
            yield live
    finally:
        _ACTIVE.reset(token)


def declared_mesh(argsets: Iterable[Any]) -> str | None:
    """The one mesh the calls' specs were declared on (an example's ``"mesh"``, a ShapeDtypeStruct's), or None."""
    from jitscope.load.specs import iter_array_specs

    meshes = {spec.mesh for a in argsets for spec in iter_array_specs((a.args, a.kwargs)) if spec.mesh}
    return next(iter(meshes)) if len(meshes) == 1 else None  # several: each spec says which it needs


@contextlib.contextmanager
def example_mesh_scope(argsets: Iterable[Any]) -> Iterator[Any | None]:
    """Without ``--mesh``: the mesh the examples declare, set up as ``--mesh`` would be (devices first)."""
    text = declared_mesh(argsets) if active_mesh() is None else None
    if text is None:
        yield active_mesh()
        return
    with mesh_scope(None, text) as mesh:
        yield mesh


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
