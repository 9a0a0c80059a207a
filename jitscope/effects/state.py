"""Objects that existed before the traced body ran, and how to tell when they change.

Mutating a dict the traced function created is harmless; mutating one it received,
closed over or found in a module global is a trace-time side effect. The monitor
therefore registers those pre-existing objects (with a cheap shallow snapshot) and,
when user code may have changed one, compares it with its snapshot. Snapshots keep
references, not copies of leaves, and compare by identity: comparing JAX tracers or
arrays with ``==`` would be wrong and slow.
"""

from __future__ import annotations

import collections
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from jitscope.effects.bytecode import ObjectPath
from jitscope.model.effects import EffectKind

#: Marks "no value" (unresolvable path, missing attribute) where None is a real value.
MISSING: object = object()

#: Containers larger than this are snapshotted by length only (their content is not copied).
_LARGE_CONTAINER = 10_000
#: Traversal limits when registering everything reachable from one root (a pytree, a closure value).
_MAX_DEPTH = 4
_MAX_OBJECTS_PER_ROOT = 2_000

_PLAIN_CONTAINERS: tuple[type, ...] = (dict, list, set, bytearray, collections.deque)
_ORIGIN_WORDS: dict[EffectKind, str] = {
    EffectKind.ARGUMENT_MUTATION: "argument",
    EffectKind.CLOSURE_MUTATION: "closure",
    EffectKind.GLOBAL_WRITE: "global",
}


def _snapshot(value: object) -> object:
    """A shallow, identity-comparable picture of ``value``'s content.

    Dicts and instance attributes become their keys followed by their values, lists
    their items, sets a frozenset; anything larger than ``_LARGE_CONTAINER`` only its
    length (copying it on every check would cost more than the trace).
    """
    if isinstance(value, dict):
        if len(value) > _LARGE_CONTAINER:
            return len(value)
        return (*dict.keys(value), *dict.values(value))
    if isinstance(value, (list, collections.deque)):
        return len(value) if len(value) > _LARGE_CONTAINER else tuple(value)
    if isinstance(value, set):
        return len(value) if len(value) > _LARGE_CONTAINER else frozenset(value)
    if isinstance(value, bytearray):
        return bytes(value)
    attributes = _instance_dict(value)
    if attributes is None:
        return None
    return (*attributes.keys(), *attributes.values())


def _same(before: object, after: object) -> bool:
    if type(before) is tuple and type(after) is tuple:
        return len(before) == len(after) and all(old is new for old, new in zip(before, after, strict=True))
    try:
        return bool(before == after)
    except Exception:  # noqa: BLE001 - exotic set members: treat as changed rather than fail
        return False


def _instance_dict(value: object) -> dict[str, object] | None:
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except (AttributeError, TypeError):
        return None
    return attributes if isinstance(attributes, dict) else None


@dataclass(slots=True)
class WatchedObject:
    """A pre-existing object and the state it had when last checked."""

    value: object
    #: The kind to report when it changes: argument, closure or global.
    kind: EffectKind
    #: How the user knows it, e.g. ``argument 'params'`` or ``global 'CACHE'``.
    label: str
    snapshot: object
    plain_container: bool

    def changed(self) -> bool:
        return not _same(self.snapshot, _snapshot(self.value))

    def refresh(self) -> None:
        self.snapshot = _snapshot(self.value)


@dataclass(slots=True)
class PreexistingObjects:
    """Registry of objects the traced body did not create, keyed by ``id``.

    Entries keep their objects alive for the watch, so an ``id`` cannot be reused by a
    new object created while tracing.
    """

    is_user_type: Callable[[type], bool]
    entries: dict[int, WatchedObject] = field(default_factory=dict)

    def lookup(self, value: object) -> WatchedObject | None:
        return self.entries.get(id(value))

    def register(self, root: object, kind: EffectKind, name: str) -> None:
        """Register ``root`` and the containers reachable from it (pytrees, object attributes)."""
        word = _ORIGIN_WORDS[kind]
        pending: list[tuple[object, str, int]] = [(root, name, 0)]
        visited = 0
        while pending and visited < _MAX_OBJECTS_PER_ROOT:
            value, path, depth = pending.pop()
            visited += 1
            if isinstance(value, tuple):  # immutable itself, but may hold mutable pytree nodes
                children: Iterator[tuple[object, str]] = (
                    (item, f"{path}[{i}]") for i, item in enumerate(value)
                )
            elif self._is_watchable(value):
                if id(value) in self.entries:
                    continue
                plain = isinstance(value, _PLAIN_CONTAINERS)
                self.entries[id(value)] = WatchedObject(
                    value, kind, f"{word} '{path}'", _snapshot(value), plain
                )
                children = self._children(value, path)
            else:
                continue
            if depth < _MAX_DEPTH:
                pending.extend((child, child_path, depth + 1) for child, child_path in children)

    def _is_watchable(self, value: object) -> bool:
        if isinstance(value, _PLAIN_CONTAINERS):
            return True
        kind = type(value)
        if kind is types.SimpleNamespace:
            return True
        if isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType)):
            return False
        return self.is_user_type(kind)

    @staticmethod
    def _children(value: object, path: str) -> Iterator[tuple[object, str]]:
        if isinstance(value, dict):
            if len(value) <= _LARGE_CONTAINER:
                yield from ((item, f"{path}[{key!r}]") for key, item in dict.items(value))
        elif isinstance(value, (list, collections.deque)):
            if len(value) <= _LARGE_CONTAINER:
                yield from ((item, f"{path}[{i}]") for i, item in enumerate(value))
        elif not isinstance(value, (set, bytearray)):
            attributes = _instance_dict(value)
            if attributes is not None:
                yield from ((item, f"{path}.{attr}") for attr, item in attributes.items())

    def changed_plain_containers(self) -> list[WatchedObject]:
        """Plain containers whose content differs from their snapshot."""
        return [entry for entry in self.entries.values() if entry.plain_container and entry.changed()]

    def changed_entries(self) -> list[WatchedObject]:
        return [entry for entry in self.entries.values() if entry.changed()]


def user_type_predicate(is_user_file: Callable[[str], bool]) -> Callable[[type], bool]:
    """True for classes defined in user code (their instances can be watched for attribute writes)."""
    decided: dict[type, bool] = {}

    def is_user_type(kind: type) -> bool:
        known = decided.get(kind)
        if known is None:
            module = sys.modules.get(getattr(kind, "__module__", "") or "")
            filename = getattr(module, "__file__", None)
            known = decided[kind] = bool(filename) and is_user_file(str(filename))
        return known

    return is_user_type


def resolve_path(path: ObjectPath, frame: types.FrameType) -> object:
    """The object ``path`` names in ``frame`` right now, or ``MISSING``.

    Only reads that cannot run user code are made: frame variables, module and instance
    ``__dict__`` entries and exact dict/list/tuple items. Properties and ``__getattr__``
    are never triggered.
    """
    value: object
    if path.root in ("fast", "deref"):
        value = frame.f_locals.get(path.name, MISSING)
    elif path.root == "global":
        value = frame.f_globals.get(path.name, MISSING)
        if value is MISSING:
            value = frame.f_builtins.get(path.name, MISSING)
    else:
        value = frame.f_locals.get(path.name, MISSING)
        if value is MISSING:
            value = frame.f_globals.get(path.name, frame.f_builtins.get(path.name, MISSING))
    for step, key in path.steps:
        if value is MISSING:
            return MISSING
        value = static_attribute(value, key) if step == "attr" else _plain_item(value, key)
    return value


def class_attribute(path: ObjectPath, frame: types.FrameType) -> object:
    """``obj.name`` found in the ``__dict__`` of ``type(obj)`` or a base (a class-level attribute), or
    ``MISSING``; like :func:`resolve_path`, it runs no user code (no descriptors are called)."""
    if not path.steps or path.steps[-1][0] != "attr":
        return MISSING
    owner = resolve_path(ObjectPath(path.root, path.name, path.steps[:-1]), frame)
    if owner is MISSING or isinstance(owner, types.ModuleType):
        return MISSING
    name = path.steps[-1][1]
    for cls in type.__getattribute__(type(owner), "__mro__"):
        found = type.__getattribute__(cls, "__dict__").get(name, MISSING)
        if isinstance(found, staticmethod):
            return found.__func__
        if found is not MISSING:
            return found
    return MISSING


def static_attribute(value: object, name: object) -> object:
    """``value.name`` from a module or instance ``__dict__`` only, or ``MISSING``."""
    attributes = _instance_dict(value)
    if attributes is None or not isinstance(name, str):
        return MISSING
    return attributes.get(name, MISSING)


def _plain_item(value: object, key: object) -> object:
    kind = type(value)
    try:
        if kind is dict:
            return dict.get(value, key, MISSING)  # type: ignore[call-overload]
        if kind is list or kind is tuple:
            return value[key]  # type: ignore[index]
    except (IndexError, TypeError):
        return MISSING
    return MISSING
