"""jitscope's Python API: the functions every command stands on (``api/functions.py``) and the results
they return (``api/results.py``).

Importing it imports neither jax nor rich, nor its own modules until a name is used: the CLI
imports ``jitscope.api.checks`` on every start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jitscope.api.diff import DiffResult, diff
    from jitscope.api.functions import Watch, bench, lint, profile, trace, watch
    from jitscope.api.memory import MemoryResult, memory
    from jitscope.api.results import (
        BenchResult,
        FirstCall,
        LintResult,
        ProfileResult,
        Result,
        Timing,
        TraceCall,
        TraceResult,
        WatchResult,
    )

_WHERE = {
    **dict.fromkeys(("DiffResult", "diff"), "jitscope.api.diff"),
    **dict.fromkeys(("MemoryResult", "memory"), "jitscope.api.memory"),
    **dict.fromkeys(("Watch", "bench", "lint", "profile", "trace", "watch"), "jitscope.api.functions"),
    **dict.fromkeys(("BenchResult", "FirstCall", "LintResult", "ProfileResult", "Result", "Timing", "TraceCall",
                     "TraceResult", "WatchResult"), "jitscope.api.results"),
}
__all__ = [
    "BenchResult", "DiffResult", "FirstCall", "LintResult", "MemoryResult", "ProfileResult", "Result", "Timing", "TraceCall", "TraceResult",
    "Watch", "WatchResult", "bench", "diff", "lint", "memory", "profile", "trace", "watch",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'jitscope.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
