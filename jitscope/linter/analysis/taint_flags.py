"""Flags and records of the taint pass.

Every name carries a few flags: ``TAINT`` (may hold a tracer), ``ARRAY`` (known to
be a JAX array), ``CONTAINER`` (a Python list/dict/set/tuple built here), ``FRESH``
(created during this call, so mutating it is harmless) and ``ELEMS`` (a container
whose elements are traced arrays). :class:`FunctionFacts` is what the pass learns
about one traced function; the rules read it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from jitscope.linter.analysis.module_index import FuncNode
from jitscope.linter.analysis.parameters import param_defaults

TAINT = 1


ARRAY = 2


CONTAINER = 4


FRESH = 8


#: a container whose elements are (traced) arrays
ELEMS = 16


#: (function, traced parameters, array parameters, closure flags)
#:     -> (flags of the return value, per-element flags when it returns a tuple)
Summarizer = Callable[
    [FuncNode, frozenset[str], frozenset[str], Mapping[str, int]], tuple[int, tuple[int, ...] | None]
]


@dataclass(slots=True)
class CallEdge:
    """A function this one calls (or hands to a transform) and the parameters that get traced values."""

    callee: FuncNode
    owner: FuncNode | None
    tainted: frozenset[str]
    arrays: frozenset[str]
    boundary: bool
    reason: str
    kind: str = "callee"


@dataclass(slots=True)
class FunctionFacts:
    """What the taint pass learned about one traced function."""

    func: FuncNode
    qualname: str
    reason: str
    boundary: bool
    tainted_params: frozenset[str]
    self_name: str | None
    #: what traces it (see ``discovery.Entry.kind``)
    kind: str = "callee"
    #: parameters bound to literal constants by ``functools.partial`` (dead branches are skipped)
    constants: dict[str, object] = field(default_factory=dict)
    #: the traced parameters known to hold arrays (the rest hold traced values of unknown kind)
    array_params: frozenset[str] = frozenset()
    flags: dict[int, int] = field(default_factory=dict)
    local_names: set[str] = field(default_factory=set)
    closure: Mapping[str, int] = field(default_factory=dict)
    comp_names: set[str] = field(default_factory=set)
    globals_declared: set[str] = field(default_factory=set)
    nonlocals_declared: set[str] = field(default_factory=set)
    local_aliases: dict[str, str] = field(default_factory=dict)
    edges: list[CallEdge] = field(default_factory=list)
    external: list[object] = field(default_factory=list)
    closures: dict[int, dict[str, int]] = field(default_factory=dict)
    returns: int = 0
    #: per-element flags when every ``return`` returns a tuple of the same length
    return_elts: list[int] | None = None
    mixed_returns: bool = False
    #: call node id -> per-element flags of the tuple it returns
    tuple_flags: dict[int, tuple[int, ...]] = field(default_factory=dict)
    #: names bound to tree structures (computed on first use)
    treedef_names: frozenset[str] | None = None

    def flags_of(self, node: ast.AST) -> int:
        return self.flags.get(id(node), 0)

    def is_traced(self, node: ast.AST) -> bool:
        """True when ``node`` evaluates to a traced array (not merely something derived from one)."""
        return self.flags.get(id(node), 0) & (TAINT | ARRAY) == TAINT | ARRAY


def container_defaults(func: FuncNode) -> set[str]:
    """Parameters whose default is a tuple/list/dict/set literal."""
    literal = (ast.Tuple, ast.List, ast.Dict, ast.Set)
    return {name for name, default in param_defaults(func) if isinstance(default, literal)}


def container(elements: int) -> int:
    """Flags of a Python container built here from elements with ``elements`` flags."""
    out = (elements & TAINT) | CONTAINER | FRESH
    if elements & (ARRAY | ELEMS) and elements & TAINT:
        out |= ELEMS
    return out


def merge_env(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, value in b.items():
        out[key] = out.get(key, 0) | value
    return out
