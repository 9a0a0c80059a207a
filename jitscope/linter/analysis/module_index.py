"""What the linter knows about one module before analysing any function.

Built from the module's top-level statements only (imports, functions, classes,
loggers, module-level assignments), so it costs little more than the parse. Deeper
structure (nested functions, their owners and qualified names) is filled in lazily
by discovery and by the taint analysis, which only look at code that can be traced.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from dataclasses import dataclass

from jitscope.linter.analysis.class_members import (
    annotation_kind,
    is_array_annotation,
    is_static_field_helper_call,
    method_kinds,
    static_field_helpers,
)
from jitscope.linter.analysis.pytree_registrations import registered_static_fields
from jitscope.linter.analysis.qualified_names import ImportMap, is_array_producer
from jitscope.linter.analysis.source import ParsedSource

FuncNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
DefNode = ast.FunctionDef | ast.AsyncFunctionDef

_LOGGER_FACTORIES = frozenset({"logging.getLogger", "structlog.get_logger", "loguru.logger"})


def stmt_start(node: ast.stmt) -> int:
    """First line of a statement, decorators included."""
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        return min(node.lineno, decorators[0].lineno)
    return node.lineno


def child_bodies(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists nested directly in a compound statement."""
    if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        yield node.body
        yield node.orelse
    elif isinstance(node, (ast.With, ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.body
    elif isinstance(node, (ast.Try, ast.TryStar)):
        yield node.body
        for handler in node.handlers:
            yield handler.body
        yield node.orelse
        yield node.finalbody
    elif isinstance(node, ast.Match):
        for case in node.cases:
            yield case.body


def block_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of ``body`` and of nested blocks, not entering functions or classes."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for child in child_bodies(stmt):
                yield from block_statements(child)


def all_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of ``body`` and of every nested block, functions and classes included: the
    statements ``ast.walk`` would reach, without visiting a single expression."""
    for stmt in body:
        yield stmt
        for child in child_bodies(stmt):
            yield from all_statements(child)


#: static_argnums / static_argnames of a jit factory, as literals
FactoryStatics = tuple[tuple[int, ...] | None, tuple[str, ...] | None]


@dataclass(frozen=True, slots=True)
class ImportedFacts:
    """What other linted modules that this one imports know (found by the runner after a first pass)."""

    #: fields declared static there (dataclass fields, custom pytree registrations)
    static_fields: frozenset[str] = frozenset()
    #: jit factories defined there: (local name here, (static_argnums, static_argnames))
    factories: tuple[tuple[str, FactoryStatics], ...] = ()
    #: methods declared there that take only ``self`` and return a static value (``num_links()``)
    static_methods: frozenset[str] = frozenset()
    #: fields annotated as Python containers there (``extras: Dict``)
    container_fields: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.static_fields or self.factories or self.static_methods or self.container_fields)


class ModuleIndex:
    """Imports, definitions and module-level names of one parsed module."""

    def __init__(
        self,
        parsed: ParsedSource,
        module: str = "",
        is_package: bool = False,
        imported: ImportedFacts | None = None,
    ) -> None:
        self.parsed = parsed
        self.path = parsed.path
        self.module = module
        self.is_package = is_package
        self.names = ImportMap()
        #: module-level functions and classes by name
        self.defs: dict[str, DefNode] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        #: class id -> method name -> def
        self.methods: dict[int, dict[str, DefNode]] = {}
        #: function id -> the class it is a method of
        self.method_class: dict[int, ast.ClassDef] = {}
        #: function id -> enclosing function (None for module level and methods)
        self.owner: dict[int, FuncNode | None] = {}
        #: function id -> dotted name used in messages
        self.qualname: dict[int, str] = {}
        #: names bound at module level -> the last value assigned there (None when not a plain assignment)
        self.module_values: dict[str, ast.expr | None] = {}
        #: names of dataclass fields declared static in this module's classes
        #: (``struct.field(pytree_node=False)``, ``eqx.field(static=True)``, ``metadata={"static": True}``)
        self.static_fields: set[str] = set()
        #: names of fields annotated ``int``/``bool`` (and not declared static) in every class here that
        #: declares them: a Python value if its class keeps it out of the leaves, traced if it is a leaf
        #: (flax/chex dataclass fields are leaves, and so are equinox fields under jax.jit)
        self.python_fields: set[str] = set()
        #: names of fields annotated as arrays (``jax.Array``) in this module's classes
        self.array_fields: set[str] = set()
        #: methods taking only ``self`` that return a static value / an array (see ``class_members``)
        self.static_methods: set[str] = set()
        self.array_methods: set[str] = set()
        self._field_helpers: set[str] = set()
        self._field_kinds: dict[str, set[str]] = {}
        #: field name -> whether each class declaring it annotates it as a container
        self._container_kinds: dict[str, set[bool]] = {}
        #: fields annotated as a Python container (``Dict``, ``list[...]``) in every class here that declares
        #: them: their truth is their length, known while tracing
        self.container_fields: set[str] = set()
        #: module-level names bound to loggers
        self.loggers: set[str] = set()
        self._local_defs: dict[int, dict[str, FuncNode]] = {}
        self._call_assignments: dict[int, list[tuple[ast.expr, ast.Call]]] = {}
        #: jit factories callable here, name -> static keywords (``jit_factories.find_jit_factories``
        #: fills it on first use: discovery and the runner's module facts both ask)
        self.jit_factories: dict[str, dict[str, ast.expr]] | None = None
        self._starts: dict[int, list[int]] = {}
        self._build()
        #: static fields declared here (for other modules: see ``imported_static``)
        self.own_static_fields = frozenset(self.static_fields)
        self.own_static_methods = frozenset(self.static_methods)
        self.own_container_fields = frozenset(self.container_fields)
        self.other_fields = frozenset(self._container_kinds).difference(self.container_fields)
        imported = imported or ImportedFacts()
        self.static_methods.update(imported.static_methods)
        self.array_methods.difference_update(imported.static_methods)
        #: fields declared static in modules this one imports (passed in by the runner)
        self.static_fields.update(imported.static_fields)
        self.python_fields.difference_update(imported.static_fields)
        self.container_fields.update(imported.container_fields.difference(self._container_kinds))
        #: jit factories of other modules, by the local name they are imported as -> (argnums, argnames)
        self.imported_factories: dict[str, FactoryStatics] = dict(imported.factories)

    # -- top level -------------------------------------------------------------------------------

    def _build(self) -> None:
        self._field_helpers = static_field_helpers(self.parsed.tree, _static_field)
        self._build_top_level()
        self.static_fields.update(registered_static_fields(self.parsed.tree))
        for name, kinds in self._field_kinds.items():
            if kinds == {"str"}:
                self.static_fields.add(name)  # a str is never a JAX leaf: no str field is ever traced
            elif kinds <= {"python", "static"} and "python" in kinds:
                self.python_fields.add(name)
        self.container_fields = {name for name, kinds in self._container_kinds.items() if kinds == {True}}
        self.static_methods, self.array_methods = method_kinds(
            self.classes.values(), self.static_fields, self._is_array_call
        )

    def _is_array_call(self, call: ast.Call) -> bool:
        return is_array_producer(self.names.qualify(call.func))

    def _build_top_level(self) -> None:
        for stmt in block_statements(self.parsed.tree.body):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.names.add_import(stmt, self.module, self.is_package)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs[stmt.name] = stmt
                self.owner[id(stmt)] = None
                self.qualname[id(stmt)] = stmt.name
                self.module_values[stmt.name] = None
            elif isinstance(stmt, ast.ClassDef):
                self._add_class(stmt)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                self._add_assignment(stmt)
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                self.module_values[stmt.target.id] = None

    def _add_class(self, cls: ast.ClassDef) -> None:
        self.classes[cls.name] = cls
        self.module_values[cls.name] = None
        methods: dict[str, DefNode] = {}
        for stmt in block_statements(cls.body):
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                static = _static_field(stmt.value) or is_static_field_helper_call(stmt.value, self._field_helpers)
                kind = "static" if static else _annotation_kind(stmt.annotation)
                self._field_kinds.setdefault(stmt.target.id, set()).add(kind)
                container = not static and annotation_kind(stmt.annotation) == "container"
                self._container_kinds.setdefault(stmt.target.id, set()).add(container)
                if not static and is_array_annotation(stmt.annotation):
                    self.array_fields.add(stmt.target.id)
                if kind == "static":
                    self.static_fields.add(stmt.target.id)
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods[stmt.name] = stmt
                self.method_class[id(stmt)] = cls
                self.owner[id(stmt)] = None
                self.qualname[id(stmt)] = f"{cls.name}.{stmt.name}"
        self.methods[id(cls)] = methods

    def _add_assignment(self, stmt: ast.Assign | ast.AnnAssign) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        for target in targets:
            for name in _target_names(target):
                self.module_values[name] = value if isinstance(target, ast.Name) else None
        if value is None or len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return
        name = targets[0].id
        if isinstance(value, (ast.Name, ast.Attribute)):
            qualified = self.names.qualify(value)
            if qualified is not None:
                self.names.add_alias(name, qualified)
                if qualified in ("logging", "absl.logging"):
                    self.loggers.add(name)
        elif isinstance(value, ast.Call):
            if self.names.qualify(value.func) in _LOGGER_FACTORIES:
                self.loggers.add(name)
        elif isinstance(value, ast.Lambda):
            self.owner[id(value)] = None
            self.qualname[id(value)] = name

    # -- lookups ---------------------------------------------------------------------------------

    def local_defs(self, func: FuncNode) -> dict[str, FuncNode]:
        """Functions (and lambdas bound to names) defined directly inside ``func``."""
        key = id(func)
        found = self._local_defs.get(key)
        if found is not None:
            return found
        found = {}
        if not isinstance(func, ast.Lambda):
            prefix = self.qualname.get(key, getattr(func, "name", "<lambda>"))
            for stmt in block_statements(func.body):
                node: FuncNode | None = None
                name = ""
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    node, name = stmt, stmt.name
                elif (
                    isinstance(stmt, ast.Assign)
                    and isinstance(stmt.value, ast.Lambda)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                ):
                    node, name = stmt.value, stmt.targets[0].id
                if node is not None:
                    found[name] = node
                    self.owner.setdefault(id(node), func)
                    self.qualname.setdefault(id(node), f"{prefix}.{name}")
        self._local_defs[key] = found
        return found

    def call_assignments(self, func: FuncNode) -> list[tuple[ast.expr, ast.Call]]:
        """(target, call) of the ``x = f(...)`` statements (one target) anywhere in ``func``, nested
        functions and classes included. Cached: the taint pass asks on each of its passes over ``func``,
        and a walk of the statements alone is a fraction of an ``ast.walk`` of every expression."""
        key = id(func)
        found = self._call_assignments.get(key)
        if found is None:
            body = func.body if isinstance(func.body, list) else []
            found = [
                (stmt.targets[0], stmt.value)
                for stmt in all_statements(body)
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)
            ]
            self._call_assignments[key] = found
        return found

    def name_of(self, func: FuncNode) -> str:
        """Dotted name of a function for messages (``Model.apply``, ``step.body``, ``<lambda>``)."""
        name = self.qualname.get(id(func))
        return name if name else str(getattr(func, "name", "<lambda>"))

    def statement_chain(self, line: int) -> list[ast.stmt]:
        """Enclosing statements (outermost first) of the innermost statement covering ``line``."""
        chain: list[ast.stmt] = []
        bodies: list[list[ast.stmt]] = [self.parsed.tree.body]
        while bodies:
            hit = None
            for body in bodies:
                if not body:
                    continue
                starts = self._starts.get(id(body))
                if starts is None:
                    starts = [stmt_start(s) for s in body]
                    self._starts[id(body)] = starts
                i = bisect.bisect_right(starts, line) - 1
                if i >= 0 and line <= (body[i].end_lineno or body[i].lineno):
                    hit = body[i]
                    break
            if hit is None:
                break
            chain.append(hit)
            bodies = list(child_bodies(hit))
        return chain


def _target_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def target_names(target: ast.expr) -> Iterator[str]:
    """Names bound by an assignment target."""
    return _target_names(target)


def _annotation_kind(annotation: ast.expr) -> str:
    """``str`` (``str | None``, ``Optional[str]``): "str"; ``int``/``bool`` likewise: "python"; else "other"."""
    names: list[str] = []
    node = annotation
    if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)):
        outer = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
        if outer != "Optional":
            return "other"
        node = node.slice
    parts = [node]
    while parts:
        part = parts.pop()
        if isinstance(part, ast.BinOp) and isinstance(part.op, ast.BitOr):
            parts += [part.left, part.right]
        elif isinstance(part, ast.Constant) and part.value is None:
            continue
        elif isinstance(part, ast.Constant) and isinstance(part.value, str):
            names.append(part.value)  # a string annotation: "int"
        elif isinstance(part, ast.Name):
            names.append(part.id)
        else:
            return "other"
    if names and all(n == "str" for n in names):
        return "str"
    if names and all(n in ("int", "bool") for n in names):
        return "python"
    return "other"


def _static_field(value: ast.expr | None) -> bool:
    """``field(pytree_node=False)``, ``field(static=True)``, ``field(metadata={"static": True})``: a field
    that a pytree dataclass keeps in its treedef, so it is a Python value even inside traced code."""
    if not isinstance(value, ast.Call):
        return False
    for keyword in value.keywords:
        v = keyword.value
        if keyword.arg == "pytree_node" and isinstance(v, ast.Constant) and v.value is False:
            return True
        if keyword.arg == "static" and isinstance(v, ast.Constant) and v.value is True:
            return True
        if keyword.arg == "metadata" and isinstance(v, ast.Dict):
            for key, item in zip(v.keys, v.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value in ("static", "pytree_node")
                    and isinstance(item, ast.Constant)
                    and item.value is (key.value == "static")
                ):
                    return True
    return False
