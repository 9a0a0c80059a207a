"""Which line of the profiled function leads to a helper's line, for XLA that keeps one frame (pure: no jax).

Older XLA (JAX 0.4.38-0.6.x) writes no stack-frame tables into the HLO: an instruction's metadata
names only the innermost user frame (``source_file``/``source_line``), so work done in a helper
the function calls points at the helper's line, not at the call line. This module reads the
call graph from the bytecode instead: the global and closure names each line of the function
(and its lambdas and comprehensions) loads that are user functions, then theirs, a few calls deep.
Each line of those helpers gets the one chain of calls that reaches it from the function; a
helper reached along two different chains (called from two lines), and everything it calls, gets
none, so its work stays listed at the helper's line rather than being guessed. Each helper is
walked once, so a wide call graph costs its size, not its number of paths.
"""

from __future__ import annotations

import dis
import inspect
from collections.abc import Callable, Iterator
from types import CodeType
from typing import Any

from jitscope.model.common import Location

#: How many calls deep helpers are followed.
DEPTH = 4
_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF"})

Chain = tuple[Location, ...]  # innermost frame first, ending at the function's call line


def _codes(code: CodeType) -> Iterator[CodeType]:
    """``code`` and the code of its lambdas, comprehensions and nested functions."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _codes(const)


def _callees(fn: Any, is_user_file: Callable[[str], bool]) -> Iterator[tuple[int, str, Any]]:
    """(line, name of the code on it, user function) for each user function ``fn``'s code loads by name."""
    names: dict[str, Any] = dict(getattr(fn, "__globals__", {}))
    closure = getattr(fn, "__closure__", None) or ()
    for name, cell in zip(fn.__code__.co_freevars, closure, strict=False):
        try:
            names[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    for code in _codes(fn.__code__):
        for instruction in dis.get_instructions(code):
            if instruction.opname not in _LOADS or instruction.positions is None:
                continue
            target = _function(names.get(str(instruction.argval)))
            line = instruction.positions.lineno
            if target is not None and line is not None and is_user_file(target.__code__.co_filename):
                yield line, code.co_name, target


def _function(value: Any) -> Any:
    """The Python function behind ``value`` (through ``jax.jit``, functools.wraps), or None."""
    if value is None or not callable(value):
        return None
    try:
        value = inspect.unwrap(value)
    except ValueError:  # a cycle of __wrapped__
        return None
    return value if inspect.isfunction(value) else None


def call_chains(fn: Any, is_user_file: Callable[[str], bool]) -> dict[tuple[str, int], Chain]:
    """For each line of a user helper ``fn`` reaches, the calls from ``fn``'s line to it (unambiguous only)."""
    fn = _function(fn)
    if fn is None:
        return {}
    found: dict[tuple[str, int], Chain | None] = {}
    walked: dict[CodeType, Chain] = {}  # each helper is walked once, from the first call reaching it
    ambiguous: set[CodeType] = set()

    def lines(callee: Any) -> Iterator[tuple[tuple[str, int], str]]:
        file = callee.__code__.co_filename
        for code in _codes(callee.__code__):
            for _, _, line in code.co_lines():
                if line is not None:
                    yield (file, line), code.co_name

    def walk(callee: Any, trail: Chain) -> None:
        if callee.__code__ is top:  # the function itself, reached again by a recursive helper
            return
        if callee.__code__ in walked:
            if walked[callee.__code__] != trail:
                forget(callee, 0)  # reached along a second chain: none of its lines has one chain
            return
        walked[callee.__code__] = trail
        for key, name in lines(callee):
            chain = (Location(*key, name), *trail)
            if key not in found:
                found[key] = chain
            elif found[key] != chain:
                found[key] = None
        if len(trail) < DEPTH:
            for line, name, inner in _callees(callee, is_user_file):
                walk(inner, (Location(callee.__code__.co_filename, line, name), *trail))

    def forget(callee: Any, depth: int) -> None:
        if callee.__code__ in ambiguous or callee.__code__ is top:
            return
        ambiguous.add(callee.__code__)
        for key, _ in lines(callee):
            found[key] = None
        if depth < DEPTH:
            for _, _, inner in _callees(callee, is_user_file):
                forget(inner, depth + 1)

    top = fn.__code__
    for line, name, callee in _callees(fn, is_user_file):
        walk(callee, (Location(top.co_filename, line, name),))
    return {key: chain for key, chain in found.items() if chain is not None}
