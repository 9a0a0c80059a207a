"""Methods traced through a base class in another module.

``Strategy.tell`` in ``base.py`` is jitted and calls ``self._tell(...)``; a subclass in
``evotf.py`` overrides ``_tell``, so its ``_tell`` runs under that trace although nothing
in ``evotf.py`` says so. Each module reports its classes (qualified bases, methods) and
the methods it found traced; the runner joins them over the linted tree and asks the
subclass's module to treat those overrides as traced helpers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from jitscope.linter.analysis.module_index import ModuleIndex
from jitscope.linter.analysis.parameters import positional_params
from jitscope.linter.analysis.taint_flags import ARRAY, TAINT, FunctionFacts


@dataclass(frozen=True, slots=True)
class ClassFacts:
    """One class of a module: its qualified name, the qualified names of its bases, its methods."""

    qualname: str
    bases: tuple[str, ...]
    methods: frozenset[str]
    #: methods the module's analysis found traced -> flags (TAINT/ARRAY) of their positional parameters
    traced: tuple[tuple[str, tuple[int, ...]], ...]


def class_facts(index: ModuleIndex, traced: Mapping[int, FunctionFacts]) -> tuple[ClassFacts, ...]:
    """The classes of ``index`` with the methods found traced (``traced``: by id of the function)."""
    out: list[ClassFacts] = []
    for name, cls in index.classes.items():
        bases: list[str] = []
        for base in cls.bases:
            if isinstance(base, ast.Subscript):
                base = base.value  # a generic base: ``Environment[State, Action]``
            qualified = index.names.qualify(base)
            if qualified is None and getattr(base, "id", None) in index.classes:
                qualified = f"{index.module}.{base.id}"  # type: ignore[attr-defined]
            if qualified is not None:
                bases.append(qualified)
        methods = index.methods.get(id(cls), {})
        flags = tuple(
            (m, _param_flags(traced[id(func)])) for m, func in methods.items() if id(func) in traced
        )
        out.append(ClassFacts(f"{index.module}.{name}", tuple(bases), frozenset(methods), flags))
    return tuple(out)


def _param_flags(facts: FunctionFacts) -> tuple[int, ...]:
    names = positional_params(facts.func)
    if facts.self_name is not None and names and names[0] == facts.self_name:
        names = names[1:]
    return tuple(
        (TAINT | ARRAY if n in facts.array_params else TAINT) if n in facts.tainted_params else 0
        for n in names
    )


#: (qualified base method, flags of its positional parameters after self)
Traced = tuple[str, tuple[int, ...]]


def traced_overrides(classes: Iterable[ClassFacts]) -> dict[str, Traced]:
    """``module.Class.method`` -> the traced base method in another class that it overrides
    (for the methods not found traced in their own module)."""
    by_name: Mapping[str, ClassFacts] = {c.qualname: c for c in classes}
    memo: dict[str, dict[str, Traced]] = {}

    def inherited(qualname: str, seen: frozenset[str]) -> dict[str, Traced]:
        """method name -> the traced method it resolves to in ``qualname`` or its bases."""
        if qualname in memo:
            return memo[qualname]
        facts = by_name.get(qualname)
        found: dict[str, Traced] = {}
        if facts is not None and qualname not in seen:
            for base in facts.bases:
                for method, where in inherited(base, seen | {qualname}).items():
                    found.setdefault(method, where)
            for method, flags in facts.traced:
                found[method] = (f"{qualname}.{method}", flags)
        memo[qualname] = found
        return found

    out: dict[str, Traced] = {}
    for facts in by_name.values():
        from_bases: dict[str, Traced] = {}
        for base in facts.bases:
            for method, where in inherited(base, frozenset({facts.qualname})).items():
                from_bases.setdefault(method, where)
        own = {method for method, _ in facts.traced}
        for method in facts.methods - own:
            base_method = from_bases.get(method)
            if base_method is not None and (method == "__call__" or not method.startswith("__")):
                out[f"{facts.qualname}.{method}"] = base_method
    return out
