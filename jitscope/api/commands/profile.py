"""``jitscope.profile``: device time of cached calls, attributed to the user's source lines."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jitscope.api.checks import check_count, check_seconds
from jitscope.api.targets import shape_list, target_of

if TYPE_CHECKING:
    from jitscope.api.results import ProfileResult


def profile(
    fn: Callable[..., Any], /, *args: Any,
    calls: int = 20,
    budget: float = 0.3,
    seed: int = 0,
    trace_out: str | Path | None = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    shapes: str | Sequence[str] | None = None,
    **kwargs: Any,
) -> ProfileResult:
    """Profile cached calls of ``fn(*args, **kwargs)`` on the device and attribute the time to your source
    lines, as ``jitscope profile``.

    >>> result = jitscope.profile(train_step, model, optimizer, batch)
    >>> result.lines[0].location, result.lines[0].share
    """
    from jitscope.api.results import ProfileResult
    from jitscope.load.mesh import example_mesh_scope
    from jitscope.profiling.runner import ProfileOptions, profile_calls
    from jitscope.timing.plan import plan_calls

    check_count("calls", calls, limit=100_000)
    check_seconds("budget", budget)
    if trace_out is not None:
        Path(trace_out).mkdir(parents=True, exist_ok=True)
    handle = target_of(fn, args, kwargs, static_argnums, static_argnames, abstract=False, shapes=shapes)
    options = ProfileOptions(calls=calls, budget=budget, seed=seed,
                             trace_out=str(trace_out) if trace_out is not None else None)
    planned = plan_calls([handle], shape_list(shapes))
    with example_mesh_scope(argset for _, argset in planned):
        return ProfileResult(profile_calls(planned, options))
