"""jitscope's Python API: the functions every command stands on (see ``api/functions.py``).

Importing it imports neither jax nor rich; the work starts when a function is called.
"""

from __future__ import annotations

from jitscope.api.functions import Watch, bench, lint, profile, trace, watch
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

__all__ = [
    "BenchResult", "FirstCall", "LintResult", "ProfileResult", "Result", "Timing", "TraceCall", "TraceResult",
    "Watch", "WatchResult", "bench", "lint", "profile", "trace", "watch",
]
