"""Why a compile happened, in words: shared by ``jitscope run``'s live line, its summary and its report.

Pure text from ``CompileEvent`` records (no rich, no view model): the output layer's views and
writers word causes through it, and so does the pytest plugin's ``max_compiles`` message
(``testing/watch.py``), which sits below the output layer.
"""

from __future__ import annotations

from jitscope.model.keys import KeyDiff
from jitscope.model.run import CompileEvent
from jitscope.units import fmt_duration

#: A few words on the commonest causes, keyed by what changed (the end of the component name).
HINTS = {
    "object": "jax.jit of a new function object: jit built in a loop or around a fresh lambda; build it once",
    "weak_type": "a Python scalar one time, an array the other",
}

#: Hints for a wrapper's own rules, keyed by (``CompileEvent.via``, what changed).
VIA_HINTS = {
    ("equinox.filter_jit", "value"): "filter_jit holds every non-array argument static: each new Python value "
                                     "compiles again; pass it as jnp.asarray(...) to make it traced",
}

#: Why a compile with the same key as an earlier one happened.
SAME_KEY = "JAX dropped that entry (cache cleared, the jitted object was garbage-collected, or a key part " \
           "jitscope cannot see)"
UNKNOWN = "cause unknown (jitscope did not see this call's arguments)"


def cause_hint(event: CompileEvent, cause: KeyDiff) -> str:
    """A few words on what usually makes ``cause`` change, or ""."""
    what = cause.component.rsplit(": ", 1)[-1]
    return VIA_HINTS.get((event.via, what)) or HINTS.get(what, "")


def phases_text(trace_s: float, lower_s: float, compile_s: float) -> str:
    """``trace 4 ms, compile 80 ms`` (phases that took no time are left out)."""
    parts = [f"{name} {fmt_duration(s)}" for name, s in (("trace", trace_s), ("lower", lower_s),
                                                            ("compile", compile_s)) if s > 0]
    return ", ".join(parts) if parts else "no phase reported"


def nearest_text(event: CompileEvent) -> str:
    """``vs compile 1``, and the ties: ``vs compile 1; compiles 1, 2 are equally near``."""
    if not event.nearest:
        return ""
    vs = f"vs compile {event.nearest[0]}"
    if len(event.nearest) > 1:
        vs += "; compiles " + ", ".join(map(str, event.nearest)) + " are equally near"
    return vs


def describe_causes(event: CompileEvent) -> str:
    """Why this event happened, in one line ("" for a function's first compile)."""
    if event.number == 1:
        return ""
    if event.same_key_as:
        return f"same cache key as compile {event.same_key_as}: {SAME_KEY}"
    if not event.causes:
        return UNKNOWN
    changed = "; ".join(str(c) + (f" ({hint})" if (hint := cause_hint(event, c)) else "") for c in event.causes)
    vs = nearest_text(event)
    return f"{changed} ({vs})" if vs else changed
