"""jitscope: see what ``jax.jit`` really does to your code.

The Python API (each returns the record the CLI renders; see ``jitscope.api``)::

    import jitscope

    report = jitscope.trace(train_step, model, optimizer, batch)   # jaxpr, StableHLO, HLO, costs
    timing = jitscope.bench(train_step, model, optimizer, batch)   # first call against cached calls
    lines = jitscope.profile(train_step, model, optimizer, batch)  # device time by source line
    peak = jitscope.memory(train_step, model, optimizer, batch)    # what holds memory at the peak, by line
    findings = jitscope.lint("src/")                               # JAX hazards, statically
    change = jitscope.diff(step_before, step_after, model, batch)   # what a change did to the compiled program
    with jitscope.watch() as w:                                    # every compile of a block, with causes
        ...
    advice = jitscope.doctor("train.py", "--steps", "100")          # what to fix first, ranked by its cost

In IPython or Jupyter: ``%load_ext jitscope``, then ``%jitscope trace f(x)`` (see ``jitscope.notebook``).

Importing this package never imports jax: the CLI's ``--help`` and the linter's static
checks must stay fast, so everything that needs jax imports it lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from jitscope.api import (
        BenchResult,
        DiffResult,
        DoctorResult,
        LintResult,
        MemoryResult,
        ProfileResult,
        TraceResult,
        Watch,
        WatchResult,
        bench,
        diff,
        doctor,
        lint,
        memory,
        profile,
        trace,
        watch,
    )

__all__ = [
    "BenchResult", "DiffResult", "DoctorResult", "LintResult", "MemoryResult", "ProfileResult", "TraceResult", "Watch",
    "WatchResult", "__version__", "bench", "diff", "doctor", "lint", "load_ipython_extension", "memory", "profile",
    "trace", "watch",
]

_API = frozenset(__all__) - {"__version__", "load_ipython_extension"}

# ``jitscope.doctor`` is both the API's function and a package (``jitscope/doctor/``). Importing the package
# binds it as this module's attribute, which would hide the function from ``__getattr__`` from then on (a
# second ``jitscope.doctor(...)`` called the package). Imported here (a docstring: nothing to pay) and unbound,
# later imports of its modules leave the attribute alone.
import jitscope.doctor  # noqa: E402

del globals()["doctor"]


def __getattr__(name: str) -> Any:
    """The API is imported on first use: ``jitscope --help`` and the CLI's start do not pay for it."""
    if name in _API:
        import jitscope.api

        value = getattr(jitscope.api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'jitscope' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _API)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jitscope``: registers the ``%jitscope`` line and cell magics."""
    from jitscope.notebook import load_ipython_extension as load

    load(ipython)
