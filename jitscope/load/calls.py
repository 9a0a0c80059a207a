"""Which calls to trace for each target: from the command line, or from JITSCOPE_EXAMPLES."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Sequence
from pathlib import Path

from jitscope.errors import SpecError
from jitscope.load.specs import ArgSet, build_argset
from jitscope.load.target import TargetHandle, load_targets


def _required_params(fn: object) -> list[str]:
    try:
        sig = inspect.signature(fn)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def default_calls(target: TargetHandle) -> tuple[ArgSet, ...]:
    """The calls to make without flags: the declared examples, or no arguments if none are needed."""
    if target.examples:
        return target.examples
    if not _required_params(target.fn):
        return (ArgSet(),)
    raise SpecError(
        f"no arguments for {target.name}: it takes ({', '.join(_required_params(target.fn))})",
        hint="pass --shapes \"f32[8,128], ...\" (and --static NAME=VALUE), or declare JITSCOPE_EXAMPLES "
        "in the module",
    )


def load_all(texts: Sequence[str | TargetHandle], cwd: Path | None = None) -> list[TargetHandle]:
    """Load every target named on the command line, in order, without duplicates (loaded ones pass through)."""
    seen: dict[str, TargetHandle] = {}
    for text in texts:
        for handle in [text] if isinstance(text, TargetHandle) else load_targets(text, cwd):
            seen.setdefault(handle.name, handle)
    return list(seen.values())


def static_variants(statics: Sequence[str] | None) -> list[list[str]]:
    """``["n=1", "n=2", "m=3"]`` -> ``[["n=1", "m=3"], ["n=2", "m=3"]]`` (order of first appearance)."""
    by_name: dict[str, list[str]] = {}
    for item in statics or ():
        name = item.partition("=")[0].strip()
        values = by_name.setdefault(name, [])
        if item not in values:
            values.append(item)
    if not by_name:
        return [[]]
    return [list(combo) for combo in itertools.product(*by_name.values())]


def calls_from_flags(
    target: TargetHandle,
    shapes: Sequence[str] | None,
    statics: Sequence[str] | None,
    kwargs: Sequence[str] | None,
    *,
    vary_statics: bool = False,
) -> tuple[ArgSet, ...]:
    """The calls to make of ``target``, from the command line and the module's examples.

    Each ``--shapes`` is one call. Without ``--shapes``, the examples are used, with any
    ``--static``/``--arg`` values laid on top of each. ``vary_statics`` (bench) turns
    repeated values of one static name into one call per value, combined across names.
    """
    if not shapes and not statics and not kwargs:
        return default_calls(target)
    variants = static_variants(statics) if vary_statics else [list(statics or ())]
    if shapes:
        return tuple(build_argset(s, variant, list(kwargs or ())) for s in shapes for variant in variants)
    overrides = [build_argset(None, variant, list(kwargs or ())) for variant in variants]
    if target.examples:
        return tuple(example.with_overrides(o) for example in target.examples for o in overrides)
    return tuple(overrides)
