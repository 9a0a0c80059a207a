"""What bench's cached calls time: the call the user makes.

A ``jax.jit`` wrapper's call is the compiled program's C++ fast path, and jitscope's own
``jax.jit`` of the same function with the same options is that very call, so bench times
its own (fresh, cache-cleared) wrapper. A library's wrapper (``equinox.filter_jit``, flax's
``nnx.jit``) runs Python on every call before the program (equinox splits the arguments into
arrays and the rest and hashes the rest; nnx splits and merges its graph state), so the
user's call can take much longer than the program: bench times the wrapper object itself,
called as the user calls it, and times the compiled program alone beside it. Their
difference is the wrapper's own per-call work (``CachedRecord.wrapper_overhead``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jitscope.jaxcompat.wrappers import recognise
from jitscope.load.target import TargetHandle
from jitscope.timing import inputs as inp
from jitscope.timing.loops import Block


@dataclass(frozen=True, slots=True)
class TimedCall:
    """The callable the cached rounds time, how to wait for its outputs, and which wrapper it is."""

    fn: Any
    block: Block
    #: "" for jitscope's jax.jit of the function; else the library wrapper's kind (``CachedRecord.called``).
    called: str = ""
    note: str = ""


def timed_call(target: TargetHandle, jitted: Any, out: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> TimedCall:
    """The user's own wrapper where it does per-call work of its own, else ``jitted`` (whose first output was
    ``out``). The wrapper is called once here, untimed, with the arguments as given (fresh copies of what
    it donates): it compiles into its own cache, and its outputs tell how to block on every leaf of them."""
    own = TimedCall(jitted, inp.blocker_for(out))
    found = recognise(target.original)
    if not found.calls_python_per_call:
        return own
    try:
        first = target.original(*args, **kwargs)
        block = inp.blocker_for(first)
        block(first)
    except Exception as exc:  # noqa: BLE001 - e.g. a --static the wrapper itself traces: time the program
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0]}" if str(exc) else type(exc).__name__
        return TimedCall(jitted, own.block, note=f"your {found.kind} call failed as jitscope made it ({reason}); "
                                                   "cached calls time the compiled program alone")
    return TimedCall(target.original, block, found.kind)
