"""jitscope's Python API, the spine every command stands on: one module per command under ``commands/``
(``trace``, ``bench``, ``profile``, ``memory``, ``lint``, ``watch``, ``diff``), each holding both the Python
entry and the whole command minus option parsing, and the results they return (``results.py``).

Importing it imports neither jax nor rich, nor its own modules until a name is used: the CLI
imports ``jitscope.api.checks`` on every start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jitscope.api.commands.bench import bench
    from jitscope.api.commands.diff import DiffResult, diff
    from jitscope.api.commands.doctor import DoctorResult, doctor
    from jitscope.api.commands.lint import lint
    from jitscope.api.commands.memory import MemoryResult, memory
    from jitscope.api.commands.profile import profile
    from jitscope.api.commands.trace import trace
    from jitscope.api.commands.watch import Watch, watch
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
    **dict.fromkeys(("DiffResult", "diff"), "jitscope.api.commands.diff"),
    **dict.fromkeys(("DoctorResult", "doctor"), "jitscope.api.commands.doctor"),
    **dict.fromkeys(("MemoryResult", "memory"), "jitscope.api.commands.memory"),
    **{name: f"jitscope.api.commands.{name}" for name in ("bench", "lint", "profile", "trace", "watch")},
    "Watch": "jitscope.api.commands.watch",
    **dict.fromkeys(("BenchResult", "FirstCall", "LintResult", "ProfileResult", "Result", "Timing", "TraceCall",
                     "TraceResult", "WatchResult"), "jitscope.api.results"),
}
__all__ = [
    "BenchResult", "DiffResult", "DoctorResult", "FirstCall", "LintResult", "MemoryResult", "ProfileResult", "Result", "Timing", "TraceCall", "TraceResult",
    "Watch", "WatchResult", "bench", "diff", "doctor", "lint", "memory", "profile", "trace", "watch",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'jitscope.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
