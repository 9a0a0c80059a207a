"""Static facts about one code object that the effect monitor needs at run time.

A profile hook sees calls but not stores: ``d[k] = v``, ``obj.x = v`` and
``global x; x = v`` run as opcodes, not calls. So before user code runs, its bytecode
is read once to find every such store and *what* it writes to (``params['w']``,
``self.cache``), and every place that may call a function the profiler cannot see
(NumPy's Cython random methods). A small symbolic stack walk recovers those targets
from straight-line code; anything it cannot follow becomes "unknown" rather than a
guess, so the monitor degrades to coarser checks instead of wrong ones.
"""

from __future__ import annotations

import types

from jitscope.effects.code_facts import (
    HANDING_BUILTINS,
    CallCandidate,
    CodeFacts,
    HandedCall,
    NameStore,
    ObjectPath,
    StoreSite,
    nested_code_objects,
)
from jitscope.effects.stack_walk import StackWalk

__all__ = [
    "HANDING_BUILTINS",
    "CallCandidate",
    "CodeFacts",
    "HandedCall",
    "NameStore",
    "ObjectPath",
    "StoreSite",
    "analyse_code",
    "nested_code_objects",
]


def _plausible_handed_calls(code: types.CodeType, walk: StackWalk) -> tuple[HandedCall, ...]:
    """Drop calls of locals that can hold no partial made elsewhere: neither an argument nor
    assigned ``functools.partial(...)`` (``fn = make(); fn(x)`` is left out, to keep line events rare)."""
    n_args = code.co_argcount + code.co_kwonlyargcount
    n_args += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    arguments = set(code.co_varnames[:n_args])
    return tuple(
        call
        for call in walk.handed_calls
        if call.callee.root != "fast"
        or call.callee.steps
        or call.callee.name in arguments
        or call.callee.name in walk.partial_locals
        or call.maker is not None
    )


def analyse_code(code: types.CodeType, call_names: frozenset[str] = frozenset()) -> CodeFacts:
    """Read ``code``'s bytecode once: its stores, its possible invisible calls, the globals it loads.

    ``call_names`` are the attribute or global names that may be a call the profiler cannot
    see (e.g. ``normal`` for ``np.random.normal``); each load of one becomes a candidate.
    """
    walk = StackWalk(code, call_names)
    try:
        walk.run()
    except (ValueError, IndexError, TypeError):  # unexpected bytecode: know less, never fail
        return CodeFacts(nested_codes=nested_code_objects(code))
    return CodeFacts(
        global_stores=tuple(walk.global_stores),
        nonlocal_stores=tuple(walk.nonlocal_stores),
        stores=tuple(walk.stores),
        call_candidates=tuple(walk.candidates),
        handed_calls=_plausible_handed_calls(code, walk),
        loaded_globals=frozenset(walk.loaded_globals),
        returns_partial=walk.returns_partial,
        nested_codes=nested_code_objects(code),
    )
