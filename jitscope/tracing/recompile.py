"""Why did it recompile? Cache keys of a call sequence, and every component that changed.

JAX keys its compile cache on the call's signature: which arguments are passed by
position or keyword, each argument's pytree structure, every leaf's shape, dtype and
weak_type, and the value of every static argument. JAX's own
``jax_explain_cache_misses`` reports a single "closest key" guess; here we list *all*
components that differ from the nearest earlier compile (the one with the fewest
differences), computed from the argument specs. ``observe_sequence`` also traces the
calls on one jit wrapper and counts how often the function body really ran, so a
predicted recompilation is confirmed (or a surprising one, e.g. hidden global state,
is caught).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jitscope.load.specs import SHORT_NAMES, ArgSet, ArraySpec


@dataclass(frozen=True, slots=True)
class KeyDiff:
    """One component of the cache key that differs from the nearest previous compile."""

    component: str  # e.g. "x: shape", "threshold (static): value", "params: pytree structure"
    before: str
    after: str

    def __str__(self) -> str:
        return f"{self.component} {self.before} -> {self.after}"


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call of a sequence: did it compile, and if it recompiled, why."""

    index: int  # 1-based position in the sequence
    call: str
    compiles: bool
    #: The earlier call whose compile is nearest (fewest differing components); for a cache hit, the
    #: call with the same key; 0 for the first compile.
    nearest: int = 0
    diffs: tuple[KeyDiff, ...] = ()
    #: True when tracing confirmed the prediction (the body ran iff a compile was predicted).
    observed: bool | None = None


@dataclass(frozen=True, slots=True)
class SequenceRecord:
    target: str
    calls: tuple[CallRecord, ...]

    @property
    def compiles(self) -> int:
        return sum(c.compiles for c in self.calls)


def _structure(value: Any) -> str:
    """Pytree structure of a spec value, with leaves shown as ``*``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_structure(v)}" for k, v in sorted(value.items(), key=str)) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_structure(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_structure(v) for v in value) + "]"
    return "*"


def _leaves(path: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in sorted(value.items(), key=str) for leaf in _leaves(f"{path}[{k!r}]", v)]
    if isinstance(value, (list, tuple)):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(f"{path}[{i}]", v)]
    return [(path, value)]


def _leaf_components(path: str, leaf: Any) -> dict[str, str]:
    if isinstance(leaf, ArraySpec):
        return {
            f"{path}: shape": str(leaf.shape),
            f"{path}: dtype": SHORT_NAMES.get(leaf.dtype, leaf.dtype),
            f"{path}: weak_type": str(leaf.weak_type),
        }
    if isinstance(leaf, (bool, int, float, complex)):
        # A Python scalar is traced as a weak-typed 0-d array of its kind's default dtype, so
        # it shares a cache entry with an f32[] weak-typed array (JAX keys on avals only).
        kind = {bool: "bool", int: "i32", float: "f32", complex: "c64"}[type(leaf)]
        return {
            f"{path}: shape": "()",
            f"{path}: dtype": kind,
            f"{path}: weak_type": "True",
        }
    return {f"{path}: kind": type(leaf).__name__}


def cache_key(argset: ArgSet, param_names: list[str], static_names: tuple[str, ...],
              static_nums: tuple[int, ...] = ()) -> dict[str, str]:
    """The components of JAX's compile-cache key for one call, as readable strings."""
    key: dict[str, str] = {}
    named = [(param_names[i] if i < len(param_names) else f"args[{i}]", v, i) for i, v in enumerate(argset.args)]
    for name, value, index in named:
        key[f"{name}: passed"] = "positionally"
        _add_argument(key, name, value, name in static_names or index in static_nums)
    for name, value in argset.kwargs.items():
        key[f"{name}: passed"] = "by keyword"
        _add_argument(key, name, value, name in static_names)
    return key


def _add_argument(key: dict[str, str], name: str, value: Any, static: bool) -> None:
    if static:
        key[f"{name} (static): value"] = repr(value)
        key[f"{name} (static): type"] = type(value).__name__
        return
    key[f"{name}: pytree structure"] = _structure(value)
    for path, leaf in _leaves(name, value):
        key.update(_leaf_components(path, leaf))


def diff(before: dict[str, str], after: dict[str, str]) -> tuple[KeyDiff, ...]:
    """Every component that differs, including ones present on one side only."""
    out = []
    for component in dict.fromkeys([*before, *after]):
        a, b = before.get(component, "(absent)"), after.get(component, "(absent)")
        if a != b:
            out.append(KeyDiff(component, a, b))
    # A changed pytree structure explains its leaves' differences; keep the leaves only if it did not change.
    changed_trees = {d.component.split(":")[0] for d in out if d.component.endswith("pytree structure")}
    return tuple(d for d in out if d.component.endswith("pytree structure")
                 or d.component.split(":")[0].split("[")[0] not in changed_trees)


def analyse_sequence(target: str, argsets: tuple[ArgSet, ...], param_names: list[str],
                     static_names: tuple[str, ...], static_nums: tuple[int, ...] = ()) -> SequenceRecord:
    """Predict which calls compile, and why, from their cache keys."""
    compiled: list[tuple[int, dict[str, str]]] = []
    calls = []
    for index, argset in enumerate(argsets, start=1):
        statics = tuple(dict.fromkeys(static_names + argset.static_names))
        key = cache_key(argset, param_names, statics, static_nums)
        same = next((i for i, k in compiled if k == key), 0)
        if same:
            calls.append(CallRecord(index, argset.describe(), compiles=False, nearest=same))
            continue
        if compiled:
            nearest, nearest_key = min(compiled, key=lambda item: len(diff(item[1], key)))
            calls.append(CallRecord(index, argset.describe(), True, nearest, diff(nearest_key, key)))
        else:
            calls.append(CallRecord(index, argset.describe(), compiles=True))
        compiled.append((index, key))
    return SequenceRecord(target, tuple(calls))


def cache_hits(target: Any, argsets: tuple[ArgSet, ...] | list[ArgSet]) -> list[int]:
    """For each call of ``target``'s sequence, the earlier call (1-based) with the same cache key, or 0."""
    import inspect

    try:
        params = list(inspect.signature(target.fn).parameters)
    except (TypeError, ValueError):
        params = []
    seq = analyse_sequence(target.name, tuple(argsets), params, target.options.static_argnames,
                           target.options.static_argnums)
    return [0 if call.compiles else call.nearest for call in seq.calls]


def observe_sequence(target: Any, argsets: tuple[ArgSet, ...]) -> list[bool | None]:
    """Trace each call on ONE jit wrapper; True where the body ran again (a cache miss), None on error.

    ``jit(f).trace`` shares JAX's tracing cache with calls, so the body runs exactly when a
    real call would retrace and recompile; abstract inputs mean nothing is allocated.
    """
    from jitscope.jaxcompat.jit import make_jit
    from jitscope.load.abstract import to_abstract

    statics: tuple[str, ...] = ()
    for argset in argsets:
        statics += argset.static_names
    runs = [0]
    fn = target.fn

    def counted(*args: Any, **kwargs: Any) -> Any:
        runs[0] += 1
        return fn(*args, **kwargs)

    import functools

    jitted = make_jit(functools.wraps(fn)(counted), target.options.with_static_names(tuple(dict.fromkeys(statics))))
    observed: list[bool | None] = []
    for argset in argsets:
        before = runs[0]
        args, kwargs = to_abstract(argset)
        try:
            jitted.trace(*args, **kwargs)
        except Exception:  # noqa: BLE001 - a failing call is reported by the trace checks
            observed.append(None)
            continue
        observed.append(runs[0] > before)
    return observed
