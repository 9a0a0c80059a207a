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

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jitscope.model.keys import KeyDiff

#: One call's cache key: component -> value, in argument order.
Key = dict[str, str]

#: How long a static value's repr may be before it is shortened (both sides of a diff stay readable).
MAX_VALUE_CHARS = 80


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


# ---------------------------------------------------------------- static values

#: How many distinct static values one ``StaticValues`` remembers (JAX's own cache is bounded too).
MAX_REMEMBERED = 4096


class StaticValues:
    """Static argument values as text that is equal exactly when JAX's cache treats them as equal.

    JAX keys a static argument by its exact type, ``__hash__`` and ``__eq__``
    (``api_util._HashableWithStrictTypeEquality``), never by its repr: two equal objects
    whose reprs differ (a counter, an address) share one cache entry, and two objects
    with identity equality (``object.__eq__``: plain classes, functions, ``partial``)
    are the same key only when they are the same object. One instance serves a whole
    call sequence (``lint --trace``) or run (``jitscope run``): an equal value gets the
    text of the first equal one seen, a distinct value with the same repr gets ``#n``
    added, and an identity-compared object is numbered per instance, so a new one on
    every call shows as ``<C object #2, compared by identity>``. Objects are held only
    while they live (weakly where possible) and at most ``MAX_REMEMBERED`` of them.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_hash: dict[tuple[type, int], list[tuple[Any, str]]] = {}
        self._texts: set[str] = set()
        self._instances: dict[int, tuple[Any, str]] = {}
        self._counts: dict[str, int] = {}
        self._remembered = 0

    def text(self, value: Any) -> str:
        with self._lock:
            if type(value).__eq__ is object.__eq__:
                return self._identity_text(value)
            try:
                hashed = hash(value)
            except TypeError:
                return f"<unhashable {type(value).__name__}>"
            return self._value_text(value, hashed)

    def _number(self, cls: str) -> int:
        self._counts[cls] = self._counts.get(cls, 0) + 1
        return self._counts[cls]

    def _identity_text(self, value: Any) -> str:
        known = self._instances.get(id(value))
        if known is not None:
            ref, text = known
            if (ref() if isinstance(ref, weakref.ref) else ref) is value:
                return text
        cls = type(value).__qualname__
        text = f"<{cls} object #{self._number(cls)}, compared by identity>"
        if len(self._instances) < MAX_REMEMBERED:
            ident = id(value)
            try:  # forget it when it dies, so a new object at the same address is not taken for it
                held: Any = weakref.ref(value, lambda _: self._instances.pop(ident, None))
            except TypeError:
                held = value
            self._instances[ident] = (held, text)
        return text

    def _value_text(self, value: Any, hashed: int) -> str:
        bucket = self._by_hash.setdefault((type(value), hashed), [])
        for earlier, text in bucket:
            try:
                if bool(earlier == value):
                    return text
            except Exception:  # noqa: BLE001, S112 - an __eq__ that raises is JAX's error to report, not ours
                continue
        cls = type(value).__qualname__
        text = repr(value)
        if " at 0x" in text:  # the default repr names an address, not the value
            text = f"<{cls} #{self._number(cls)}>"
        text = shorten(text)
        if text in self._texts:  # a different value that reads the same (a shortened or partial repr)
            self._counts[text] = self._counts.get(text, 1) + 1
            text = f"{text} #{self._counts[text]}"
        if self._remembered < MAX_REMEMBERED:
            self._remembered += 1
            bucket.append((value, text))
            self._texts.add(text)
        return text


# ---------------------------------------------------------------- building keys


def add_passed(key: Key, name: str, keyword: bool) -> None:
    key[f"{name}: passed"] = "by keyword" if keyword else "positionally"


def add_static(key: Key, name: str, value: Any, statics: StaticValues) -> None:
    key[f"{name} (static): value"] = statics.text(value)
    key[f"{name} (static): type"] = type(value).__name__


def add_structure(key: Key, name: str, structure: str) -> None:
    key[f"{name}: pytree structure"] = structure


#: The dtypes JAX narrows when ``jax_enable_x64`` is off (short names).
NARROWED = {"f64": "f32", "i64": "i32", "u64": "u32", "c128": "c64"}


def canonical_dtype(dtype: str, x64: bool) -> str:
    """The dtype JAX traces an argument of ``dtype`` (short name) as: 64-bit ones narrowed when x64 is off."""
    return dtype if x64 else NARROWED.get(dtype, dtype)


def add_array(key: Key, path: str, shape: tuple[int, ...], dtype: str, weak_type: bool,
              sharding: str | None = None, *, x64: bool) -> None:
    """An array leaf as JAX sees it: a float64 NumPy array with x64 off is traced as f32, so it keys as f32."""
    key[f"{path}: shape"] = str(tuple(shape))
    key[f"{path}: dtype"] = canonical_dtype(dtype, x64)
    key[f"{path}: weak_type"] = str(bool(weak_type))
    if sharding is not None:
        key[f"{path}: sharding"] = sharding


def add_other(key: Key, path: str, value: Any) -> None:
    key[f"{path}: kind"] = type(value).__name__


def structure(value: Any, other: Callable[[Any], str] | None = None) -> str:
    """Pytree structure with leaves shown as ``*``: dicts, lists and tuples spelled out.

    ``other`` names any other container (a dataclass or NamedTuple pytree); by default
    everything else is a leaf. ``None`` is a node with no children for JAX, not a leaf.
    """
    if value is None:
        return "None"
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
