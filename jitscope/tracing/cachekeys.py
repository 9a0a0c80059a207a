"""Compile-cache keys as readable components, and every component that differs between two.

JAX keys a jitted function's compile cache on the call's signature: which arguments are
passed by position or keyword, each argument's pytree structure, every leaf's shape,
dtype, weak_type (and, for committed arrays, sharding), the value of every static
argument, the function object itself (with its closure), and the trace context (x64,
default device, mesh). A key here is an ordered ``dict`` from component name
(``"x: shape"``, ``"threshold (static): value"``) to its value as text.

This is the one recompile engine: ``lint --trace`` (JS306, keys built from argument
specs in ``recompile``) and ``jitscope run`` (keys built from the live arguments of a
real cache miss in ``jitscope.run.keys``) both name components with the helpers below
and compare keys with ``diff`` and ``nearest``, so their causes read the same. Pure
Python: no JAX here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: One call's cache key: component -> value, in argument order.
Key = dict[str, str]

#: How long a static value's repr may be before it is shortened (both sides of a diff stay readable).
MAX_VALUE_CHARS = 80


@dataclass(frozen=True, slots=True)
class KeyDiff:
    """One component of the cache key that differs from the nearest previous compile."""

    component: str  # e.g. "x: shape", "threshold (static): value", "params: pytree structure"
    before: str
    after: str

    def __str__(self) -> str:
        return f"{self.component} {self.before} -> {self.after}"


@dataclass(frozen=True, slots=True)
class Nearest:
    """The earlier keys nearest to a new one: all those with the fewest differing components."""

    #: Labels (call or compile numbers) of the equally near earlier keys, earliest first.
    labels: tuple[int, ...]
    #: The differences from the first of them.
    diffs: tuple[KeyDiff, ...]

    @property
    def ambiguous(self) -> bool:
        """Several earlier keys are equally near: the cause is one of several, not a guess."""
        return len(self.labels) > 1


def shorten(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------- building keys


def add_passed(key: Key, name: str, keyword: bool) -> None:
    key[f"{name}: passed"] = "by keyword" if keyword else "positionally"


def static_text(value: Any) -> str:
    """A static value as JAX tells them apart: by repr, or by hash where the repr is only an address."""
    text = repr(value)
    if " object at 0x" in text:
        try:
            return f"<{type(value).__name__} with hash {hash(value)}>"
        except TypeError:
            return f"<unhashable {type(value).__name__}>"
    return shorten(text)


def add_static(key: Key, name: str, value: Any) -> None:
    key[f"{name} (static): value"] = static_text(value)
    key[f"{name} (static): type"] = type(value).__name__


def add_structure(key: Key, name: str, structure: str) -> None:
    key[f"{name}: pytree structure"] = structure


def add_array(key: Key, path: str, shape: tuple[int, ...], dtype: str, weak_type: bool,
              sharding: str | None = None) -> None:
    key[f"{path}: shape"] = str(tuple(shape))
    key[f"{path}: dtype"] = dtype
    key[f"{path}: weak_type"] = str(bool(weak_type))
    if sharding is not None:
        key[f"{path}: sharding"] = sharding


def add_other(key: Key, path: str, value: Any) -> None:
    key[f"{path}: kind"] = type(value).__name__


def python_scalar_dtype(value: complex, x64: bool = False) -> str:
    """The dtype JAX gives a Python scalar argument (weak-typed, of its kind's default width)."""
    bits = "64" if x64 else "32"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "i" + bits
    if isinstance(value, float):
        return "f" + bits
    return "c128" if x64 else "c64"


def structure(value: Any, other: Callable[[Any], str] | None = None) -> str:
    """Pytree structure with leaves shown as ``*``: dicts, lists and tuples spelled out.

    ``other`` names any other container (a dataclass or NamedTuple pytree); by default
    everything else is a leaf.
    """
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        return "{" + ", ".join(f"{k!r}: {structure(v, other)}" for k, v in items) + "}"
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return "(" + ", ".join(structure(v, other) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(structure(v, other) for v in value) + "]"
    return other(value) if other is not None else "*"


def structure_change(before: str, after: str) -> str:
    """A short note on what changed in a pytree structure: dict keys or a length, when that is all."""
    import ast

    def parse(text: str) -> Any:
        try:
            return ast.literal_eval(text.replace("*", "None"))
        except (ValueError, SyntaxError):
            return None

    a, b = parse(before), parse(after)
    if isinstance(a, dict) and isinstance(b, dict):
        added, removed = [k for k in b if k not in a], [k for k in a if k not in b]
        parts = ([f"keys added {', '.join(map(repr, added))}"] if added else []) + (
            [f"keys removed {', '.join(map(repr, removed))}"] if removed else [])
        return "; ".join(parts)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and type(a) is type(b) and len(a) != len(b):
        return f"length {len(a)} -> {len(b)}"
    return ""


# ---------------------------------------------------------------- comparing keys


def diff(before: Key, after: Key) -> tuple[KeyDiff, ...]:
    """Every component that differs, including ones present on one side only."""
    out = []
    for component in dict.fromkeys([*before, *after]):
        a, b = before.get(component, "(absent)"), after.get(component, "(absent)")
        if a != b:
            out.append(KeyDiff(component, a, b))
    # A static argument that appears or disappears: its value says it, its type adds nothing.
    appeared = {d.component.split(" (static)")[0] for d in out
                if d.component.endswith("(static): value") and "(absent)" in (d.before, d.after)}
    out = [d for d in out if not (d.component.endswith("(static): type") and d.component.split(" (static)")[0]
                                  in appeared)]
    # A changed pytree structure explains its leaves' differences; keep the leaves only if it did not change.
    changed_trees = {d.component.split(":")[0] for d in out if d.component.endswith("pytree structure")}
    return tuple(d for d in out if d.component.endswith("pytree structure")
                 or d.component.split(":")[0].split("[")[0].split(".")[0] not in changed_trees)


def nearest(earlier: Sequence[tuple[int, Key]], key: Key) -> Nearest | None:
    """The earlier keys with the fewest differences from ``key`` (None when there are none)."""
    if not earlier:
        return None
    scored = [(label, diff(k, key)) for label, k in earlier]
    fewest = min(len(d) for _, d in scored)
    best = [(label, d) for label, d in scored if len(d) == fewest]
    return Nearest(tuple(label for label, _ in best), best[0][1])
