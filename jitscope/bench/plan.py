"""Which calls to benchmark: targets x shape sets x static variants.

``--shapes`` may be repeated (one row per shape set) and ``--static NAME=VALUE`` too:
every distinct value of the same name is another variant, and variants of different
names combine, so ``--static n=1 --static n=2`` shows what each new static value costs.
Without flags, each target's ``JITSCOPE_EXAMPLES`` are used, as ``jitscope trace`` does;
``--static``/``--arg`` without ``--shapes`` override the examples' values.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

from jitscope.load.specs import ArgSet, build_argset
from jitscope.load.target import TargetHandle, check_call
from jitscope.tracing.run import argsets_for, load_all


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


def _merge(example: ArgSet, cli: ArgSet) -> ArgSet:
    kwargs = {**example.kwargs, **cli.kwargs}
    statics = tuple(dict.fromkeys(example.static_names + cli.static_names))
    return ArgSet(example.args, kwargs, statics, example.label)


def argsets_from_flags(
    target: TargetHandle, shapes: Sequence[str] | None, statics: Sequence[str] | None,
    kwargs: Sequence[str] | None,
) -> tuple[ArgSet, ...]:
    """The ArgSets to benchmark ``target`` with."""
    if not shapes and not statics and not kwargs:
        return argsets_for(target, None)
    variants = static_variants(statics)
    if not shapes:
        if target.examples:
            return tuple(
                _merge(example, build_argset(None, variant, list(kwargs or ())))
                for example in target.examples
                for variant in variants
            )
        return tuple(build_argset(None, variant, list(kwargs or ())) for variant in variants)
    return tuple(build_argset(s, variant, list(kwargs or ())) for s in shapes for variant in variants)


def plan_calls(
    targets: Sequence[str], shapes: Sequence[str] | None = None, statics: Sequence[str] | None = None,
    kwargs: Sequence[str] | None = None, cwd: Path | None = None,
) -> list[tuple[TargetHandle, ArgSet]]:
    """Load the targets and pair each with its ArgSets, in command-line order."""
    calls: list[tuple[TargetHandle, ArgSet]] = []
    for handle in load_all(list(targets), cwd):
        for argset in argsets_from_flags(handle, shapes, statics, kwargs):
            check_call(handle, argset)
            calls.append((handle, argset))
    return calls
