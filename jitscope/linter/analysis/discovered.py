"""What discovery finds: traced entry points, jit sites, and calls that leave the module."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from jitscope.linter.analysis.module_index import DefNode, FuncNode


@dataclass(slots=True)
class Entry:
    """A function that runs under tracing."""

    func: FuncNode
    reason: str
    #: True when tracing starts here (jit, vmap, lax body); False for a plain callee
    boundary: bool
    tainted: frozenset[str]
    owner: FuncNode | None = None
    #: parameters left untraced only because they have defaults (traced again when a call passes them)
    defaulted: frozenset[str] = frozenset()
    #: parameters marked static (static_argnums/argnames, nondiff_argnums): never traced
    static: frozenset[str] = frozenset()
    #: traced parameters known to hold arrays (None: all of ``tainted``)
    arrays: frozenset[str] | None = None
    #: what traces it: "jit", "pmap", "vmap", "checkpoint", "custom_jvp", "body" (lax), "rule", "callee"
    kind: str = "callee"
    #: parameters bound to literal constants by ``functools.partial``
    constants: tuple[tuple[str, object], ...] = ()


@dataclass(slots=True)
class JitSite:
    """One application of jit/pmap: a decorator or a call ``jax.jit(f, ...)``."""

    node: ast.expr
    kind: str
    target: FuncNode | None
    bound_method: bool
    static_argnums: tuple[int, ...] | None
    static_argnames: tuple[str, ...] | None
    keywords: dict[str, ast.expr]
    in_function: DefNode | None
    in_loop: bool
    immediately_called: bool
    bound_name: str | None
    chain: list[ast.stmt] = field(default_factory=list)


@dataclass(slots=True)
class ExternalRef:
    """A traced call into another module: resolved by the runner across the linted tree."""

    qualname: str
    reason: str
    #: flags (TAINT/ARRAY) of positional arguments, then keyword names that carry traced values / arrays
    positional: tuple[int, ...] = ()
    keywords: frozenset[str] = frozenset()
    all_tainted: bool = False
    array_keywords: frozenset[str] = frozenset()
    #: with ``all_tainted``: positions and names that stay static, and whether defaulted parameters do
    static_positions: tuple[int, ...] = ()
    static_names: frozenset[str] = frozenset()
    defaults_static: bool = False


@dataclass(slots=True)
class Discovery:
    entries: list[Entry] = field(default_factory=list)
    jit_sites: list[JitSite] = field(default_factory=list)
    external: list[ExternalRef] = field(default_factory=list)
