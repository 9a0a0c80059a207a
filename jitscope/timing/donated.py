"""Donated arguments in timed calls: a donated buffer is gone after the call, so every call gets fresh
device copies, made outside the timed region (bench's cached calls, profile's timed runs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jitscope.load.target import TargetHandle
from jitscope.timing import inputs as inp
from jitscope.timing.calibrate import MAX_LOOPS
from jitscope.timing.clock import Clock
from jitscope.timing.loops import RoundTimer, blocked_round, fresh_input_round

#: Donated inputs are copied for every call; keep the copies of one round below this.
FRESH_INPUT_BYTES = 256 * 2**20


def cached_round(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any], donated: Donated, block: Any,
                 clock: Clock) -> tuple[RoundTimer, int]:
    """The timed round of cached calls, and the most loops a round may have: donated arguments get
    fresh copies, made outside the timed region, and a round's copies stay under FRESH_INPUT_BYTES."""
    if not donated:
        return blocked_round(jitted, args, kwargs, block, clock), MAX_LOOPS

    def prepare() -> tuple[tuple[Any, ...], dict[str, Any]]:
        return donated.fresh(args, kwargs)

    donated_bytes = max(1, donated.nbytes(args, kwargs))
    return fresh_input_round(jitted, prepare, block, clock), max(1, FRESH_INPUT_BYTES // donated_bytes)


@dataclass(frozen=True, slots=True)
class Donated:
    """The donated arguments of one call: by position, and by name when passed as keywords."""

    positions: tuple[int, ...] = ()
    names: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.positions or self.names)

    def fresh(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Arguments with device copies of the donated ones: a donated buffer is gone after the call."""
        if not self:
            return args, kwargs
        args = tuple(inp.copy_arrays(a) if i in self.positions else a for i, a in enumerate(args))
        return args, {k: inp.copy_arrays(v) if k in self.names else v for k, v in kwargs.items()}

    def nbytes(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        return sum(inp.tree_nbytes(args[i]) for i in self.positions) + sum(inp.tree_nbytes(kwargs[k])
                                                                             for k in self.names)


def donated_arguments(target: TargetHandle, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Donated:
    """Which arguments the call donates. JAX resolves ``donate_argnames`` to positions and back through the
    signature, so a donated parameter passed as a keyword (``--arg``) is donated too and needs copies."""
    import inspect

    nums = target.options.donate_argnums
    names: tuple[str, ...] = ()
    if nums and kwargs:
        try:
            params = list(inspect.signature(target.fn).parameters.values())
        except (TypeError, ValueError):  # builtins and some C callables have no signature
            params = []
        names = tuple(p.name for i, p in enumerate(params) if i in nums and p.name in kwargs
                      and p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return Donated(tuple(i for i in nums if i < len(args)), names)
