"""Where a jaxpr's captured constants came from: closure cells, globals, bound ``self``."""

from __future__ import annotations

import types
from typing import Any


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type)


def _add(out: dict[int, str], label: str, value: Any, depth: int = 0) -> None:
    """Record ``value`` (and arrays one container level down) under ``label``."""
    if _is_array(value):
        out.setdefault(id(value), label)
    elif depth == 0 and isinstance(value, dict):
        for key, item in list(value.items())[:256]:
            _add(out, f"{label}[{key!r}]", item, depth + 1)
    elif depth == 0 and isinstance(value, (list, tuple)):
        for i, item in enumerate(value[:256]):
            _add(out, f"{label}[{i}]", item, depth + 1)


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def const_origins(fn: Any) -> dict[int, str]:
    """Map id(array) -> where the function can reach it from, e.g. "closure variable `w`"."""
    out: dict[int, str] = {}
    bound_self = getattr(fn, "__self__", None)
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return out
    where = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False):
        try:
            _add(out, f"closure variable `{name}` of {fn.__name__} ({where})", cell.cell_contents)
        except ValueError:  # empty cell
            continue
    module_globals = getattr(fn, "__globals__", {})
    module = module_globals.get("__name__", "?")
    for name in sorted(_code_names(code)):
        if name in module_globals:
            _add(out, f"global `{name}` in module {module}", module_globals[name])
    if bound_self is not None:
        for name, value in list(vars(bound_self).items())[:256] if hasattr(bound_self, "__dict__") else ():
            _add(out, f"attribute `self.{name}`", value)
    return out
