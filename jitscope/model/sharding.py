"""Records of a sharded program: the mesh, each leaf's layout, the collectives and where they came from.

``TraceRecord.sharding`` holds one ``ShardingRecord`` when the compiled program runs on more
than one device or any argument was given a sharding (trace schema 1.3; older documents have
none and still load). Sizes are bytes; "per device" means what one device holds, sends or
receives. Plain data, no JAX objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: Collective kinds as XLA names them (async ``-start``/``-done`` pairs are counted once, as the kind): the one
#: list, read by the sharding analysis (``sharding/collectives.py``) and the profiler's op classes
#: (``profiling/events.py``, which adds point-to-point transfers).
COLLECTIVE_KINDS: tuple[str, ...] = (
    "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute", "collective-broadcast",
)

#: How bytes on the wire are estimated per device, for a group of N devices and B bytes (the formula
#: of the bandwidth-optimal ring algorithms; real networks and XLA's choice of algorithm vary).
TRAFFIC_FORMULAS: dict[str, str] = {
    "all-reduce": "2 * (N-1)/N * B, B = the reduced array on one device",
    "all-gather": "(N-1)/N * B, B = the gathered result on one device",
    "reduce-scatter": "(N-1)/N * B, B = the operand on one device (N x the result)",
    "all-to-all": "(N-1)/N * B, B = the operand on one device",
    "collective-permute": "B, B = the operand (each device sends one block, receives one)",
    "collective-broadcast": "B, B = the operand",
}


@dataclass(frozen=True, slots=True)
class MeshRecord:
    """The named device mesh: axes in order, and the devices' platform."""

    axes: tuple[tuple[str, int], ...]
    platform: str = ""
    device_kind: str = ""

    @property
    def size(self) -> int:
        out = 1
        for _, size in self.axes:
            out *= size
        return out

    def __str__(self) -> str:
        return ", ".join(f"{name}={size}" for name, size in self.axes)


@dataclass(frozen=True, slots=True)
class LeafSharding:
    """One input or output leaf: its global shape, how it is split, and the block each device holds."""

    path: str  # "x", "params['w']", "[0]" for outputs
    role: Literal["input", "output"]
    dtype: str  # short name: f32
    shape: tuple[int, ...]
    spec: str  # "(data,None)", "()" replicated, "" for a sharding that is not a NamedSharding
    shard_shape: tuple[int, ...]
    shard_bytes: int
    global_bytes: int
    replicated: bool = False
    #: The spec asked for (an argument spec's @(...) or jit's in_shardings) when it differs from ``spec``.
    requested: str = ""


@dataclass(frozen=True, slots=True)
class Collective:
    """One collective instruction of the optimised HLO."""

    kind: str  # one of COLLECTIVE_KINDS
    name: str  # the HLO instruction, e.g. "all-reduce.1" (the -start one for async pairs)
    dtype: str
    shape: tuple[int, ...]  # the per-device result shape (the first array of a combined collective)
    group_size: int  # N: devices in each replica group
    groups: int  # how many groups
    axes: tuple[str, ...]  # mesh axes the groups span; () when not known
    send_bytes: int  # per device, by TRAFFIC_FORMULAS
    recv_bytes: int
    is_async: bool = False
    in_loop: bool = False  # inside a while loop body (scan, fori_loop)
    file: str = ""
    line: int = 0
    op_name: str = ""  # JAX's op_name metadata: jit(step)/transpose(jvp())/dot_general
    on_parameter: str = ""  # the entry parameter it applies to directly, e.g. "params['w']"
    arrays: int = 1  # XLA combines several collectives into one over a tuple of arrays

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "(no source line)"


@dataclass(frozen=True, slots=True)
class LineTraffic:
    """Communication attributed to one line of the user's source."""

    file: str
    line: int
    count: int
    send_bytes: int
    recv_bytes: int
    kinds: tuple[str, ...]
    source: str = ""  # the line's text

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "(no source line)"


@dataclass(frozen=True, slots=True)
class ShardingWarning:
    """A likely mistake in how the program is sharded."""

    kind: Literal["replicated", "gather-in-loop", "resharded", "nothing-sharded"]
    message: str
    file: str = ""
    line: int = 0


@dataclass(frozen=True, slots=True)
class ShardingRecord:
    """What the SPMD partitioner made of one call: layouts, collectives, traffic and warnings."""

    mesh: MeshRecord | None
    devices: int
    inputs: tuple[LeafSharding, ...] = ()
    outputs: tuple[LeafSharding, ...] = ()
    collectives: tuple[Collective, ...] = ()
    by_line: tuple[LineTraffic, ...] = ()
    warnings: tuple[ShardingWarning, ...] = ()

    @property
    def send_bytes(self) -> int:
        return sum(c.send_bytes for c in self.collectives)

    @property
    def recv_bytes(self) -> int:
        return sum(c.recv_bytes for c in self.collectives)

    def counts(self) -> dict[str, int]:
        """Collectives per kind, in COLLECTIVE_KINDS order."""
        out: dict[str, int] = {}
        for kind in COLLECTIVE_KINDS:
            n = sum(1 for c in self.collectives if c.kind == kind)
            if n:
                out[kind] = n
        return out
