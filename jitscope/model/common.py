"""Shared record helpers: JSON conversion and source locations."""

from __future__ import annotations

import dataclasses
import enum
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
    """Rebuild a record of type ``cls`` from ``to_jsonable`` output."""
    return typing.cast(T, _convert(cls, data))


def _convert(tp: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in [a for a in typing.get_args(tp) if a is not type(None)]:
            try:
                return _convert(arg, data)
            except (TypeError, ValueError, KeyError):
                continue
        return data
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], d) for d in data)
        return tuple(_convert(a, d) for a, d in zip(args, data, strict=False))
    if origin is list:
        (arg,) = typing.get_args(tp)
        return [_convert(arg, d) for d in data]
    if origin is dict:
        _, varg = typing.get_args(tp)
        return {k: _convert(varg, v) for k, v in data.items()}
    if origin is typing.Literal:
        return data
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise TypeError(f"expected an object for {tp.__name__}")
        hints = typing.get_type_hints(tp)
        kwargs = {
            f.name: _convert(hints[f.name], data[f.name]) for f in dataclasses.fields(tp) if f.name in data
        }
        return tp(**kwargs)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if tp is float and isinstance(data, int):
        return float(data)
    if tp is Any or isinstance(tp, typing.TypeVar):
        return data
    if isinstance(tp, type) and not isinstance(data, tp):
        raise TypeError(f"expected {tp.__name__}, got {type(data).__name__}")
    return data
