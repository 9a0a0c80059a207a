"""Gains measured, not estimated: a change applied to the user's function without editing their files.

While the program runs, every compile of a user's ``jax.jit`` function leaves its call here as abstract
values (``Recorder``, the run's ``on_compile`` hook: shapes and dtypes, nothing held on the device).
After the run, a finding whose change can be tried is tried: for a static argument that took a new
value on every call, the function is jitted again with that argument traced and compiled for the run's
calls, so the gain is the compiles it really saves (their seconds, measured side by side here), or
the change is shown not to work (the argument picks a code path: tracing it fails at the user's line).
"""

from __future__ import annotations

import inspect
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from jitscope.model.common import Location
from jitscope.model.doctor import MEASURED, NOT_ESTIMATED, RECOMPILE_STATIC, Finding
from jitscope.units import fmt_duration, plural

#: Findings whose change is tried, worst first; each costs one compile per distinct call signature.
MAX_TRIED = 3
#: Distinct call signatures compiled per tried finding (a run with hundreds is measured on these).
MAX_SIGNATURES = 8


@dataclass(frozen=True)
class AbstractCall:
    """One compile's call: the function (a handle) and its arguments as abstract values."""

    fun: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    static_argnums: tuple[int, ...]
    static_argnames: tuple[str, ...]


class Recorder:
    """``RunObserver.on_compile``: each plain-``jax.jit`` compile's call, abstract, by function."""

    def __init__(self) -> None:
        self.calls: dict[tuple[str, Location | None], list[AbstractCall]] = defaultdict(list)

    def __call__(self, event: Any, call: Any) -> None:
        if getattr(call, "via", ""):  # a library's wrapper jits by its own rules: not re-jitted here
            return
        try:
            import jax

            def abstract(leaf: Any) -> Any:
                if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
                    return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, weak_type=bool(getattr(leaf, "weak_type", False)))
                return leaf

            args, kwargs = jax.tree_util.tree_map(abstract, (tuple(call.args), dict(call.kwargs)))
        except Exception:  # noqa: BLE001 - an argument jitscope cannot describe: that call is not tried
            return
        self.calls[(event.function, event.defined_at)].append(
            AbstractCall(call.fun, args, kwargs, tuple(call.static_argnums), tuple(call.static_argnames)))


def measure(findings: Sequence[Finding], recorder: Recorder) -> list[Finding]:
    """``findings`` with the changes that can be tried applied and their gains measured."""
    out = list(findings)
    tried = 0
    for i, finding in enumerate(out):
        if tried >= MAX_TRIED:
            break
        if finding.kind != RECOMPILE_STATIC or finding.location is None:
            continue
        calls = next((c for (name, _), c in recorder.calls.items() if name == finding.function), None)
        names = finding.arguments
        if not calls or not names:
            continue
        tried += 1
        out[i] = _traced_instead(finding, calls, names)
    return out


def _traced_instead(finding: Finding, calls: Sequence[AbstractCall], names: tuple[str, ...]) -> Finding:
    import jax

    first = calls[0]
    try:
        parameters = list(inspect.signature(first.fun).parameters)
    except (TypeError, ValueError):
        return finding
    positions = {parameters.index(n) for n in names if n in parameters}
    argnums = tuple(n for n in first.static_argnums if n not in positions)
    argnames = tuple(n for n in first.static_argnames if n not in names)
    jitted = jax.jit(first.fun, static_argnums=argnums, static_argnames=argnames)
    seen: set[str] = set()  # the distinct programs the run's calls make with the arguments traced
    started = time.perf_counter()
    for call in calls[:MAX_SIGNATURES * 4]:
        try:
            lowered = jitted.trace(*call.args, **call.kwargs).lower() if hasattr(jitted, "trace") else \
                jitted.lower(*call.args, **call.kwargs)
            text = lowered.as_text()
            if text in seen:
                continue
            if len(seen) >= MAX_SIGNATURES:
                break
            lowered.compile()
            seen.add(text)
        except Exception as exc:  # noqa: BLE001 - tracing the argument failed: it picks a code path
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return replace(finding, gain_s=0.0, gain=NOT_ESTIMATED,
                           change=(f"keep {', '.join(names)} static (tried traced, it fails: {type(exc).__name__}: "
                                   f"{first_line[:160]}): it picks a code path; make its values few (round a schedule to a "
                                   f"handful), or write the path with lax.cond / lax.fori_loop so it can be traced"),
                           gain_note="measured: the change does not trace, so it gains nothing")
    if not seen:
        return finding
    spent = time.perf_counter() - started
    saved = max(finding.count - (len(seen) - 1), 0)  # recompiles the change removes, of the run's
    gain = finding.cost_s * saved / max(finding.count, 1)
    note = (f"`{finding.function}` jitted again with {', '.join(names)} traced and compiled for the "
            f"run's {plural(len(calls), 'call')} makes {plural(len(seen), 'compile')} where the run made "
            f"{finding.count + 1} ({fmt_duration(spent)} to try); the {plural(saved, 'recompile')} saved cost "
            f"{fmt_duration(gain)} in the run")
    return replace(finding, gain_s=round(gain, 6), gain=MEASURED, gain_note=note)
