"""The Python API's arguments as a loaded target: the function, its real (or abstract) arguments, its statics.

Arguments: arrays, pytrees, flax/equinox/haiku objects, optax states, Python values, as the
function is called. ``jax.ShapeDtypeStruct`` leaves are abstract: ``trace`` never allocates
anything (real arrays become their abstract values), ``bench`` and ``profile`` fill abstract
leaves with random data and time real arrays as given (a donated argument is copied before
each call, outside the timing). Options are keyword-only and named like the CLI's; a keyword
the function itself takes under one of those names goes through ``functools.partial``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jitscope.load.target import TargetHandle


def target_of(fn: Any, args: Sequence[Any], kwargs: Mapping[str, Any], static_argnums: int | Sequence[int] | None,
            static_argnames: str | Sequence[str] | None, *, abstract: bool,
            shapes: str | Sequence[str] | None) -> TargetHandle:
    """``fn`` and the arguments it is called with, loaded as the CLI loads a target string."""
    from jitscope.errors import UsageError
    from jitscope.load.live import display_name, live_target

    if not callable(fn):
        raise UsageError(f"the first argument must be the function to inspect, not {type(fn).__name__}")
    if shapes is not None and (args or kwargs):
        raise UsageError("shapes= describes the arguments: pass either the arguments or shapes=, not both")
    argnums = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
    argnames = (static_argnames,) if isinstance(static_argnames, str) else static_argnames
    name = display_name(fn)
    handle = live_target(fn, args, kwargs, text=name, attr_path=name.rsplit(":", 1)[-1],
                         how="passed to jitscope's Python API", label="", static_argnums=argnums,
                         static_argnames=argnames, abstract=abstract)
    if shapes is not None:
        import dataclasses

        handle = dataclasses.replace(handle, examples=())
    return handle


def shape_list(shapes: str | Sequence[str] | None) -> list[str] | None:
    """``shapes=``: one spec (one call) or a list of them (a call sequence)."""
    if shapes is None:
        return None
    return [shapes] if isinstance(shapes, str) else list(shapes)
