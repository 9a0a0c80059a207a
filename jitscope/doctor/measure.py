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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jitscope.jaxcompat.stages import lower
from jitscope.model.common import Location
from jitscope.model.doctor import (
    JIT_IN_LOOP,
    MEASURED,
    NOT_ESTIMATED,
    RECOMPILE_SHAPE,
    RECOMPILE_STATIC,
    Finding,
)
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
        from jitscope.jaxcompat.wrappers import FUNCTION, JAX_JIT, recognise

        if recognise(call.fun).kind not in (FUNCTION, JAX_JIT):
            return  # nnx.jit's function reaches jax.jit as a plain call: re-jitting it plainly would misjudge it
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
        if finding.kind not in _TRIES or finding.location is None:
            continue
        calls = calls_for(recorder, finding)
        if not calls:
            continue
        changed = _TRIES[finding.kind](finding, calls)
        if changed is not None:
            tried += 1
            out[i] = changed
    return out


def calls_for(recorder: Recorder, finding: Finding) -> list[AbstractCall] | None:
    """The recorded calls of the function ``finding`` is about: the one defined at its location, else the only
    function of its name (two ``step`` functions in two files, and neither at the location: none)."""
    named = [(defined_at, calls) for (name, defined_at), calls in recorder.calls.items() if name == finding.function]
    exact = [calls for defined_at, calls in named if defined_at == finding.location]
    if exact:
        return exact[0]
    return named[0][1] if len(named) == 1 else None


def _programs(jitted: Any, calls: Sequence[AbstractCall],
              reshape: Callable[[AbstractCall], AbstractCall] = lambda call: call) -> tuple[int, float]:
    """How many distinct programs ``jitted`` compiles for the run's calls (each changed by ``reshape``), and
    the seconds it took to find out (each distinct one compiled, at most ``MAX_SIGNATURES``). Raises what
    tracing raises."""
    seen: set[str] = set()
    started = time.perf_counter()
    for call in calls[:MAX_SIGNATURES * 4]:
        call = reshape(call)
        lowered = lower(jitted, call.args, call.kwargs)
        text = lowered.as_text()
        if text in seen:
            continue
        if len(seen) >= MAX_SIGNATURES:
            break
        lowered.compile()
        seen.add(text)
    return len(seen), time.perf_counter() - started


def _measured(finding: Finding, programs: int, spent: float, calls: int, what: str) -> Finding:
    """``finding`` with its gain measured: the change makes ``programs`` compiles for the run's ``calls``
    where the run made ``finding.count + 1``; the recompiles it removes cost what they cost in the run."""
    saved = max(finding.count - (programs - 1), 0)
    gain = finding.cost_s * saved / max(finding.count, 1)
    note = (f"{what} and compiled for the run's {plural(calls, 'call')} makes {plural(programs, 'compile')} "
            f"where the run made {finding.count + 1} ({fmt_duration(spent)} to try); the "
            f"{plural(saved, 'recompile')} saved cost {fmt_duration(gain)} in the run")
    return replace(finding, gain_s=round(gain, 6), gain=MEASURED, gain_note=note)


def _parameters(fun: Any) -> list[str] | None:
    try:
        return list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return None


def _traced_instead(finding: Finding, calls: Sequence[AbstractCall]) -> Finding | None:
    """A static argument that took a new value per call: jit the function again with it traced."""
    import jax

    names, first = finding.arguments, calls[0]
    parameters = _parameters(first.fun)
    if not names or parameters is None:
        return None
    positions = {parameters.index(n) for n in names if n in parameters}
    argnums = tuple(n for n in first.static_argnums if n not in positions)
    argnames = tuple(n for n in first.static_argnames if n not in names)
    try:
        programs, spent = _programs(jax.jit(first.fun, static_argnums=argnums, static_argnames=argnames), calls)
    except Exception as exc:  # noqa: BLE001 - tracing the argument failed: it picks a code path
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return replace(finding, gain_s=0.0, gain=NOT_ESTIMATED,
                       change=(f"keep {', '.join(names)} static (tried traced, it fails: {type(exc).__name__}: "
                               f"{first_line[:160]}): it picks a code path; make its values few (round a schedule to a "
                               f"handful), or write the path with lax.cond / lax.fori_loop so it can be traced"),
                       gain_note="measured: the change does not trace, so it gains nothing")
    if not programs:
        return None
    return _measured(finding, programs, spent, len(calls),
                     f"`{finding.function}` jitted again with {', '.join(names)} traced")


def _jitted_once(finding: Finding, calls: Sequence[AbstractCall]) -> Finding | None:
    """A jit built anew in a loop: one jit of the function, called with every call the run made."""
    import jax

    first = calls[0]
    try:
        programs, spent = _programs(jax.jit(first.fun, static_argnums=first.static_argnums,
                                            static_argnames=first.static_argnames), calls)
    except Exception:  # noqa: BLE001 - a call this jit cannot take (its statics differ): not measured
        return None
    if not programs:
        return None
    return _measured(finding, programs, spent, len(calls), f"`{finding.function}` jitted once, outside the loop,")


def _bucketed(finding: Finding, calls: Sequence[AbstractCall]) -> Finding | None:
    """Ragged shapes: the arguments whose shape changed padded to power-of-two lengths (their leading axis)."""
    import jax

    names, first = finding.arguments, calls[0]
    parameters = _parameters(first.fun)
    if not names or parameters is None or "pad" not in finding.change or "bucket" not in finding.change:
        return None
    positions = {parameters.index(n) for n in names if n in parameters}
    if len(positions) + sum(n in first.kwargs for n in names) < len(names):
        return None  # a nested leaf ("batch['x']") or a parameter under another name: not tried

    def pad(value: Any) -> Any:
        shape = getattr(value, "shape", None)
        if not isinstance(value, jax.ShapeDtypeStruct) or not shape:
            return value
        return jax.ShapeDtypeStruct((1 << max(shape[0] - 1, 0).bit_length(), *shape[1:]), value.dtype,
                                    weak_type=value.weak_type)

    def reshape(call: AbstractCall) -> AbstractCall:
        args = tuple(pad(a) if i in positions else a for i, a in enumerate(call.args))
        kwargs = {k: pad(v) if k in names else v for k, v in call.kwargs.items()}
        return replace(call, args=args, kwargs=kwargs)

    try:
        programs, spent = _programs(jax.jit(first.fun, static_argnums=first.static_argnums,
                                            static_argnames=first.static_argnames), calls, reshape)
    except Exception:  # noqa: BLE001 - the padded call does not trace: not measured
        return None
    if not programs:
        return None
    return _measured(finding, programs, spent, len(calls),
                     f"`{finding.function}` with {', '.join(names)} padded to power-of-two lengths")


_TRIES: dict[str, Callable[[Finding, Sequence[AbstractCall]], Finding | None]] = {
    RECOMPILE_STATIC: _traced_instead, JIT_IN_LOOP: _jitted_once, RECOMPILE_SHAPE: _bucketed}
