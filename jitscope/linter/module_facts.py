"""Facts that pass between the modules of a linted tree, joined by the runner after a first pass.

Each file's first pass reports what other modules may need (:class:`ModuleFacts`): the fields
it declares static, its jit factories, its classes with their bases and traced methods, and
what it imports. :func:`imported_facts` gives each file what the modules it imports know;
:func:`override_requests` asks for methods that override a base-class method traced elsewhere
to be checked as traced helpers.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from jitscope.linter.analysis.discovered import ExternalRef
from jitscope.linter.analysis.inherited_tracing import ClassFacts, traced_overrides
from jitscope.linter.analysis.module_index import FactoryStatics, ImportedFacts, ModuleIndex

#: how the reason of an override's request starts
OVERRIDE = "overrides"


@dataclass(frozen=True, slots=True)
class ModuleFacts:
    """What one module's first pass found that other modules may need."""

    #: fields this module declares static (dataclass fields, custom pytree registrations)
    static_fields: frozenset[str] = frozenset()
    #: this module's jit factories with literal static arguments
    factories: tuple[tuple[str, FactoryStatics], ...] = ()
    #: classes with their bases and traced methods (for overrides traced through a base class)
    classes: tuple[ClassFacts, ...] = ()
    #: (local name, dotted name) of what this module imports
    imports: tuple[tuple[str, str], ...] = ()
    #: methods of this module's classes that take only ``self`` and return a static value
    static_methods: frozenset[str] = frozenset()
    #: fields this module's classes annotate as Python containers (in every class declaring them), and
    #: the other fields they declare
    container_fields: frozenset[str] = frozenset()
    other_fields: frozenset[str] = frozenset()


def module_aliases(index: ModuleIndex) -> tuple[tuple[str, str], ...]:
    """What a module's names stand for in other modules: its imports, and its module-level
    re-exports ``staged = staging.staged`` (local name, dotted name)."""
    out = dict(index.names.aliases)
    for name, value in index.module_values.items():
        if isinstance(value, (ast.Name, ast.Attribute)):
            dotted = index.names.qualify(value)
            if dotted is not None and dotted != f"{index.module}.{name}":
                out.setdefault(name, dotted)
    return tuple(out.items())


def _exported_factories(
    modules: dict[str, list[int]], facts: Sequence[ModuleFacts]
) -> dict[str, FactoryStatics]:
    """Every jit factory of the linted modules by dotted name, re-exports included
    (``pkg/utils/__init__.py``: ``staged = staging.staged`` or ``from .staging import staged``)."""
    out: dict[str, FactoryStatics] = {}
    for name, files in modules.items():
        for i in files:
            out.update((f"{name}.{local}", statics) for local, statics in facts[i].factories)
    for _ in range(3):  # re-exports of re-exports
        added = False
        for name, files in modules.items():
            for i in files:
                for local, dotted in facts[i].imports:
                    key = f"{name}.{local}"
                    if dotted in out and key not in out:
                        out[key] = out[dotted]
                        added = True
        if not added:
            break
    return out


def _split(modules: dict[str, list[int]], dotted: str) -> tuple[str, str] | None:
    """(module, rest) for the longest module prefix of ``dotted`` among the linted modules."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in modules:
            return module, ".".join(parts[cut:])
    return None


def imported_facts(modules: dict[str, list[int]], facts: Sequence[ModuleFacts]) -> dict[int, ImportedFacts]:
    """Per file (index into ``facts``): what the other linted modules it imports know, when anything.

    A field kept static by a pytree registration in ``pkg/params.py`` is static wherever its class
    is used (the rules read traced values by attribute name); a jit factory in ``pkg/compile.py``
    that hard-codes ``static_argnums`` makes the functions it wraps elsewhere jitted with them."""
    declared: dict[str, set[str]] = {}
    methods: dict[str, set[str]] = {}
    # a field annotated as a container in every class of the linted tree that declares it (by name, like
    # the rules read fields): ``timestep.extras`` reached through another module's dataclass
    containers: set[str] = set()
    others: set[str] = set()
    for name, files in modules.items():
        for i in files:
            if facts[i].static_fields:
                declared.setdefault(name, set()).update(facts[i].static_fields)
            if facts[i].static_methods:
                methods.setdefault(name, set()).update(facts[i].static_methods)
            containers.update(facts[i].container_fields)
            others.update(facts[i].other_fields)
    factories = _exported_factories(modules, facts)
    containers.difference_update(others)
    out: dict[int, ImportedFacts] = {}
    if not declared and not factories and not methods and not containers:
        return out
    for i, here in enumerate(facts):
        fields: set[str] = set()
        static_methods: set[str] = set()
        container_fields = containers - here.container_fields
        imported: list[tuple[str, FactoryStatics]] = []
        for local, dotted in here.imports:
            split = _split(modules, dotted)
            if split is None:
                continue
            module, _ = split
            fields.update(declared.get(module, ()))
            static_methods.update(methods.get(module, ()))
            statics = factories.get(dotted)
            if statics is not None:
                imported.append((local, statics))
            elif dotted in modules:  # ``from pkg import utils``: ``utils.staged(...)``
                prefix = dotted + "."
                imported.extend(
                    (f"{local}.{key[len(prefix):]}", found)
                    for key, found in factories.items()
                    if key.startswith(prefix) and "." not in key[len(prefix):]
                )
        fields.difference_update(here.static_fields)
        static_methods.difference_update(here.static_methods)
        found = ImportedFacts(
            frozenset(fields), tuple(imported), frozenset(static_methods), frozenset(container_fields)
        )
        if found:
            out[i] = found
    return out


def override_requests(
    modules: dict[str, list[int]], facts: Sequence[ModuleFacts]
) -> list[tuple[int, ExternalRef]]:
    """Requests to check, as traced, methods that override a base-class method traced in another module."""
    classes = [c for module in facts for c in module.classes]
    out: list[tuple[int, ExternalRef]] = []
    for qualname, (where, flags) in traced_overrides(classes).items():
        files = modules.get(qualname.rsplit(".", 2)[0])
        if files:
            out.append((files[0], ExternalRef(qualname, f"{OVERRIDE} `{where}`, which is traced", flags)))
    return out
