"""Shared record helpers: JSON conversion and source locations."""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import types
import typing
from dataclasses import dataclass
from typing import Any, TypeVar

#: Version of every JSON document jitscope writes. Bump the major number on a breaking change.
SCHEMA_VERSION = "1.0"

#: ``dataclasses.field(metadata=OMITTED_WHEN_DEFAULT)``: a field added to a record in a minor schema
#: version that ``to_jsonable`` leaves out while it holds its default, so documents that do not use
#: it stay byte for byte what they were (``from_jsonable`` fills the default back in).
OMITTED_WHEN_DEFAULT = {"omit_when_default": True}

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Location:
    """A place in the user's source code."""

    file: str
    line: int
    function: str = ""
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def to_jsonable(value: Any) -> Any:
    """Convert a record (recursively) into JSON-ready dicts, lists and scalars."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not (f.metadata.get("omit_when_default") and getattr(value, f.name) == f.default)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, float) and math.isnan(value):  # NaN is not JSON
        return None
    return value


def from_jsonable(cls: type[T], data: Any) -> T:
    """Rebuild a record of type ``cls`` from ``to_jsonable`` output, checking every field against its type.

    A value of the wrong type, a required field that is missing or null, a number that is not finite or
    does not fit 64 bits raises ``FieldError`` naming the field (``rows[0].cached.median``). Null in a
    ``float`` field reads as NaN: that is how ``to_jsonable`` writes NaN. Keys the record does not have
    are ignored (a newer minor schema version may add some).
    """
    return typing.cast(T, _convert(cls, data, ""))


#: The largest integer a record field holds: a byte count, an index, a count (NumPy and XLA use 64 bits).
MAX_INT = 2**63 - 1


class FieldError(ValueError):
    """A document's value does not fit its record's type: ``field`` says where (``rows[0].median``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field or 'the document'} {problem}")
        self.field = field
        self.problem = problem


def _kind(data: Any) -> str:
    if data is None:
        return "null"
    if isinstance(data, bool):
        return "a boolean"
    if isinstance(data, (int, float)):
        return "a number"
    if isinstance(data, str):
        return "a string"
    if isinstance(data, list):
        return "a list"
    return "an object" if isinstance(data, dict) else type(data).__name__


_EXPECTED = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def _number(tp: Any, data: Any, at: str) -> Any:
    """``data`` as an ``int`` or ``float`` field: a finite number that fits 64 bits (never a boolean)."""
    if isinstance(data, bool) or not isinstance(data, (int, float)) or (tp is int and isinstance(data, float)):
        raise FieldError(at, f"is {_kind(data)}, expected {_EXPECTED[tp]}")
    if isinstance(data, int) and not -MAX_INT <= data <= MAX_INT:
        raise FieldError(at, f"is a {len(str(abs(data)))}-digit number, too large for any measurement")
    if isinstance(data, float) and not math.isfinite(data):
        raise FieldError(at, f"is {data}, expected a finite number")
    return float(data) if tp is float else data


def _convert(tp: Any, data: Any, at: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if data is None and len(args) < len(typing.get_args(tp)):
            return None
        errors: list[FieldError] = []
        for arg in args:
            try:
                return _convert(arg, data, at)
            except FieldError as exc:
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        raise FieldError(at, f"is {_kind(data)}, which is none of the types it may be")
    if tp is Any or isinstance(tp, typing.TypeVar):
        return data
    if data is None:
        if tp is float:
            return math.nan  # to_jsonable writes NaN as null
        raise FieldError(at, f"is null, expected {_expected(tp)}")
    if origin is tuple or origin is list:
        if not isinstance(data, list):
            raise FieldError(at, f"is {_kind(data)}, expected a list")
        args = typing.get_args(tp)
        if origin is list or (len(args) == 2 and args[1] is Ellipsis):
            return (list if origin is list else tuple)(_convert(args[0], d, f"{at}[{i}]") for i, d in enumerate(data))
        if len(data) != len(args):
            raise FieldError(at, f"has {len(data)} items, expected {len(args)}")
        return tuple(_convert(a, d, f"{at}[{i}]") for i, (a, d) in enumerate(zip(args, data, strict=True)))
    if origin is dict:
        if not isinstance(data, dict):
            raise FieldError(at, f"is {_kind(data)}, expected an object")
        _, varg = typing.get_args(tp)
        return {k: _convert(varg, v, f"{at}[{k!r}]") for k, v in data.items()}
    if origin is typing.Literal:
        if data not in typing.get_args(tp):
            raise FieldError(at, f"is {data!r}, expected one of {', '.join(map(repr, typing.get_args(tp)))}")
        return data
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _record(tp, data, at)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(data)
        except ValueError:
            raise FieldError(at, f"is {data!r}, not a known {tp.__name__}") from None
    if tp is int or tp is float:
        return _number(tp, data, at)
    if isinstance(tp, type) and not isinstance(data, tp):
        raise FieldError(at, f"is {_kind(data)}, expected {_expected(tp)}")
    return data


def _record(tp: type, data: Any, at: str) -> Any:
    if not isinstance(data, dict):
        raise FieldError(at, f"is {_kind(data)}, expected an object ({tp.__name__})")
    hints = _hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):
        where = f"{at}.{f.name}" if at else f.name
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name], where)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise FieldError(where, "is missing")
    return tp(**kwargs)


@functools.cache
def _hints(tp: type) -> dict[str, Any]:
    """The record's field types, evaluated once (its annotations are strings: a run report has thousands of events)."""
    return typing.get_type_hints(tp)


def _expected(tp: Any) -> str:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return f"an object ({tp.__name__})"
    return _EXPECTED.get(tp, getattr(tp, "__name__", str(tp)))
