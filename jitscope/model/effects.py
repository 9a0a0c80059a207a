"""Records of the Python side effects that ran while JAX traced a function.

A side effect in traced code runs once per trace, not once per call of the compiled
function, so it is almost always a bug (or at least a surprise). These records say
what happened, where in the user's code, and how often; they hold no live objects,
so they go through ``to_jsonable`` / ``from_jsonable`` unchanged.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from jitscope.model.common import Location


class EffectKind(str, enum.Enum):
    """What sort of trace-time side effect ran."""

    PRINT = "print"
    STDOUT = "stdout"
    LOGGING = "logging"
    FILE_IO = "file_io"
    OS = "os"
    NETWORK = "network"
    SUBPROCESS = "subprocess"
    GLOBAL_WRITE = "global_write"
    ARGUMENT_MUTATION = "argument_mutation"
    CLOSURE_MUTATION = "closure_mutation"
    RANDOMNESS = "randomness"
    CLOCK = "clock"


#: What to do instead, per kind: the end of each one-line description.
EFFECT_ADVICE: dict[EffectKind, str] = {
    EffectKind.PRINT: "use jax.debug.print",
    EffectKind.STDOUT: "use jax.debug.print",
    EffectKind.LOGGING: "log outside the traced function or use jax.debug.callback",
    EffectKind.FILE_IO: "do the I/O outside the traced function or use jax.experimental.io_callback",
    EffectKind.OS: "do it outside the traced function or use jax.experimental.io_callback",
    EffectKind.NETWORK: "do it outside the traced function or use jax.experimental.io_callback",
    EffectKind.SUBPROCESS: "run it outside the traced function",
    EffectKind.GLOBAL_WRITE: "return the value instead of storing it in a global",
    EffectKind.ARGUMENT_MUTATION: "return an updated copy instead of mutating the argument",
    EffectKind.CLOSURE_MUTATION: "pass the state in and return the new state",
    EffectKind.RANDOMNESS: "use jax.random with an explicit key",
    EffectKind.CLOCK: "read clocks outside the traced function",
}


@dataclass(frozen=True, slots=True)
class EffectRecord:
    """One distinct side effect: the same kind, place and detail, seen ``count`` times."""

    kind: EffectKind
    #: Short text naming the operation, e.g. ``print()``, ``time.time()``, ``append() on argument 'xs'``.
    detail: str
    location: Location
    count: int = 1

    def describe(self) -> str:
        """One line for people, e.g. ``print() at examples/impure.py:14 in noisy_step — runs only ...``."""
        where = f"{self.detail} at {self.location}"
        if self.location.function:
            where += f" in {self.location.function}"
        if self.count > 1:
            where += f" (x{self.count})"
        return f"{where} — runs only while tracing; {EFFECT_ADVICE[self.kind]}"

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True, slots=True)
class EffectsRecord:
    """Everything the effect monitor saw while one function was traced."""

    effects: tuple[EffectRecord, ...]
    #: How many times the traced function's body started running (JAX may trace a body more than once).
    body_runs: int
    #: Caveats about what could not be watched, e.g. another profiler was already active.
    notes: tuple[str, ...] = ()

    def of_kind(self, kind: EffectKind) -> tuple[EffectRecord, ...]:
        """The effects of one kind, in the order they were first seen."""
        return tuple(effect for effect in self.effects if effect.kind is kind)
