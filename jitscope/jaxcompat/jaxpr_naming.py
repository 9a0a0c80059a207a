"""How JAX's printer names things, so jitscope's jaxprs read like ``str(jaxpr)``.

Variable names (``a`` ... ``z``, ``ba`` ...), ``_`` for top-level outputs nobody reads
(``core._dropvars``) and the jaxprs printed once on top because several equations use
them (``core.pp_toplevel_jaxpr``). Part of the JAX adapter: it reads jaxpr internals.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Iterator
from typing import Any

from jitscope.jaxcompat.features import jaxpr_types

ClosedJaxpr = jaxpr_types().closed_jaxpr  # the same class as Jaxpr on JAX 0.12+
Jaxpr = jaxpr_types().jaxpr


def jaxprs_in(value: Any) -> tuple[Any, ...] | None:
    """The jaxprs a parameter holds: (j,) for one, a tuple for a tuple of them, None for neither."""
    if isinstance(value, (ClosedJaxpr, Jaxpr)):
        return (value,)
    if type(value) is tuple and value and all(isinstance(v, (ClosedJaxpr, Jaxpr)) for v in value):
        return value
    return None


def inner_jaxpr(jaxpr: Any) -> Any:
    return jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def var_names(taken: set[str]) -> Iterator[str]:
    """a, b, ..., z, ba, bb, ...: JAX's naming (core._encode_digits_alphabetic: base 26, a = 0)."""
    letters = string.ascii_lowercase
    candidates = itertools.chain(
        letters,
        (
            first + "".join(rest)
            for size in itertools.count(1)
            for first in letters[1:]
            for rest in itertools.product(letters, repeat=size)
        ),
    )
    if not taken:
        return candidates
    return (name for name in candidates if name not in taken)


def shared_jaxprs(root: Any) -> dict[int, tuple[str, Any]]:
    """The jaxprs used at more than one place, named, dependencies first: id(Jaxpr) -> (name, jaxpr).

    They are printed once, on top (JAX's ``let block = ... in``). A jaxpr reached through an
    equation with a ``name`` parameter (a jit call) takes that name. Unlike JAX, a big jaxpr
    used once stays nested where it is used, so indentation and ``--depth`` keep their meaning.
    """
    refs: dict[int, int] = {}
    first: dict[int, tuple[str, Any]] = {}
    order: list[int] = []  # post-order: a jaxpr after the jaxprs it uses

    def visit(jaxpr: Any) -> None:
        for eqn in jaxpr.eqns:
            params = eqn.params
            if not params:
                continue
            for value in params.values():
                found = jaxprs_in(value)
                for sub in found or ():
                    key = id(inner_jaxpr(sub))
                    if key in refs:
                        refs[key] += 1
                        continue
                    refs[key] = 1
                    name = params.get("name")
                    name = name.strip("<>") if isinstance(name, str) else ""
                    first[key] = (name or "jaxpr", sub)
                    visit(inner_jaxpr(sub))
                    order.append(key)

    visit(root)
    shared: dict[int, tuple[str, Any]] = {}
    used: dict[str, int] = {}
    for key in order:
        if refs[key] < 2:
            continue
        base, sub = first[key]
        n = used.get(base, 0)
        used[base] = n + 1
        shared[key] = (base if n == 0 else f"{base}{n}", sub)
    return shared


def unused_outputs(jaxpr: Any) -> set[int]:
    """Equation outputs of the top-level jaxpr that nothing reads (core._dropvars)."""
    used = set(map(id, jaxpr.outvars))
    unused = set()
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if id(v) not in used:
                unused.add(id(v))
        used.update(map(id, eqn.invars))
    return unused
