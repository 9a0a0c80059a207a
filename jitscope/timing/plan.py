"""Which calls to benchmark: targets x shape sets x static variants.

``--shapes`` may be repeated (one row per shape set) and ``--static NAME=VALUE`` too:
every distinct value of the same name is another variant, and variants of different
names combine, so ``--static n=1 --static n=2`` shows what each new static value costs.
Without flags, each target's ``JITSCOPE_EXAMPLES`` are used, as ``jitscope trace`` does;
``--static``/``--arg`` without ``--shapes`` override the examples' values.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from jitscope.load.calls import calls_from_flags, load_all
from jitscope.load.specs import ArgSet
from jitscope.load.target import TargetHandle, check_call


def plan_calls(
    targets: Sequence[str | TargetHandle], shapes: Sequence[str] | None = None, statics: Sequence[str] | None = None,
    kwargs: Sequence[str] | None = None, cwd: Path | None = None,
) -> list[tuple[TargetHandle, ArgSet]]:
    """Load the targets and pair each with its ArgSets, in command-line order."""
    calls: list[tuple[TargetHandle, ArgSet]] = []
    for handle in load_all(list(targets), cwd):
        for argset in calls_from_flags(handle, shapes, statics, kwargs, vary_statics=True):
            check_call(handle, argset)
            calls.append((handle, argset))
    return calls
