"""What the effect monitor knows about one code object: the records of the bytecode walk.

:class:`CodeFacts` lists a code object's in-place stores (:class:`StoreSite`), stores to
globals and closure cells (:class:`NameStore`), places that may call a function the profiler
cannot see (:class:`CallCandidate`) and calls that may make C code call print
(:class:`HandedCall`), each naming its target as an :class:`ObjectPath` from the frame.
:mod:`jitscope.effects.stack_walk` finds them; :mod:`jitscope.effects.bytecode`
is the entry point.
"""

from __future__ import annotations

import types
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ObjectPath:
    """How to reach an object from a frame: a variable, then attributes and constant keys."""

    #: "fast" (local or argument), "deref" (closure cell), "global" or "name" (module-level code).
    root: str
    name: str
    #: ("attr", name) or ("item", constant key), applied in order.
    steps: tuple[tuple[str, object], ...] = ()

    def then(self, step: str, value: object) -> ObjectPath:
        return ObjectPath(self.root, self.name, (*self.steps, (step, value)))

    def __str__(self) -> str:
        text = self.name
        for step, value in self.steps:
            text += f".{value}" if step == "attr" else f"[{value!r}]"
        return text


@dataclass(frozen=True, slots=True)
class StoreSite:
    """An opcode that changes an object in place: item or attribute store/delete, or ``x += ...``."""

    #: "item", "attr" or "inplace".
    operation: str
    #: The object being changed; None when the stack walk could not follow it.
    target: ObjectPath | None
    line: int
    attribute: str | None = None
    deleting: bool = False

    def describe(self, target_text: str) -> str:
        """Detail text, e.g. ``item assignment on argument 'params'``."""
        verb = {"item": "item", "attr": "attribute", "inplace": "in-place"}[self.operation]
        action = "deletion" if self.deleting else ("update" if self.operation == "inplace" else "assignment")
        if self.operation == "attr":
            return f"{verb} {action} .{self.attribute} on {target_text}"
        return f"{verb} {action} on {target_text}"


@dataclass(frozen=True, slots=True)
class NameStore:
    """A store to a module global (``STORE_GLOBAL``) or a closure variable (``nonlocal``)."""

    name: str
    line: int
    deleting: bool = False


@dataclass(frozen=True, slots=True)
class CallCandidate:
    """A place that may call a function invisible to the profiler; confirmed at run time."""

    callee: ObjectPath
    line: int


@dataclass(frozen=True, slots=True)
class HandedCall:
    """A call that may make C code call a builtin: ``log(x)`` or ``self.log(x)`` (a
    ``functools.partial``), ``map(f, xs)``/``filter(f, xs)``, ``sorted(xs, key=f)``. A profile hook
    sees no event for the builtin; confirmed at run time."""

    callee: ObjectPath
    #: The first positional argument (``f`` in ``map(f, xs)``), when the walk could name it.
    first_arg: ObjectPath | None
    line: int
    #: Every argument the walk could name, positional and keyword (``key=f`` in ``sorted``).
    args: tuple[ObjectPath, ...] = ()
    #: For a local callee assigned a call's result (``log = make_logger()``): what made it.
    maker: ObjectPath | None = None


#: Builtins that call their first argument from C.
HANDING_BUILTINS = ("map", "filter")


@dataclass(frozen=True, slots=True)
class CodeFacts:
    """Everything the monitor needs to know about one code object, computed once."""

    global_stores: tuple[NameStore, ...] = ()
    nonlocal_stores: tuple[NameStore, ...] = ()
    stores: tuple[StoreSite, ...] = ()
    call_candidates: tuple[CallCandidate, ...] = ()
    handed_calls: tuple[HandedCall, ...] = ()
    loaded_globals: frozenset[str] = frozenset()
    #: True when the code returns a ``functools.partial(...)`` it made (a partial factory).
    returns_partial: bool = False
    #: Code objects defined inside this one (functions, lambdas, comprehensions), recursively.
    nested_codes: tuple[types.CodeType, ...] = ()

    @property
    def watches_return(self) -> bool:
        """True when the monitor must compare state when a frame of this code returns."""
        return bool(self.global_stores or self.nonlocal_stores or self.stores)


def nested_code_objects(code: types.CodeType) -> tuple[types.CodeType, ...]:
    """Every code object defined inside ``code``, depth first."""
    found: list[types.CodeType] = []
    pending = [const for const in code.co_consts if isinstance(const, types.CodeType)]
    while pending:
        inner = pending.pop()
        found.append(inner)
        pending.extend(const for const in inner.co_consts if isinstance(const, types.CodeType))
    return tuple(found)
