"""Expressions in the taint pass: the flags of a value, from the flags of its parts.

Attribute access keeps taint except for what is static while tracing (``.shape``,
``.dtype``, private attributes); comparisons with strings or ``None`` and ``is``/``in``
tests are static; containers built from traced arrays remember it (``ELEMS``), so
indexing them gives arrays back.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jitscope.linter.analysis import qualified_names as nm
from jitscope.linter.analysis.dict_keys import iterates_keys
from jitscope.linter.analysis.parameters import BOUND
from jitscope.linter.analysis.taint_calls import CallEvaluator
from jitscope.linter.analysis.taint_flags import ARRAY, CONTAINER, ELEMS, FRESH, TAINT, container
from jitscope.linter.analysis.taint_narrowing import narrowed_names, narrowed_parts

_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


class ExpressionEvaluator(CallEvaluator):
    """Mixin for ``TaintAnalyzer``: evaluation of expressions."""

    bound: set[str]

    if TYPE_CHECKING:

        def is_local(self, name: str) -> bool: ...

        def assign(
            self, target: ast.expr, flags: int, value: ast.expr | None, element_of: ast.expr | None = None
        ) -> None: ...

        def element_flags(self, iterable: ast.expr, flags: int) -> int: ...

        @property
        def mappings(self) -> frozenset[str]: ...

        def _closure(self, node: ast.Lambda) -> None: ...

    #: parts of values an enclosing ``and`` proved Python values (``isinstance(c[1], float) and c[1] == 0``)
    narrowed_parts: frozenset[str] = frozenset()

    def expr(self, node: ast.expr) -> int:
        flags = 0
        if self.narrowed_parts and isinstance(node, (ast.Subscript, ast.Attribute)):
            if ast.dump(node) in self.narrowed_parts:
                return 0
        if isinstance(node, ast.Name):
            flags = self.name_flags(node.id)
        elif isinstance(node, ast.Constant):
            return 0
        elif isinstance(node, ast.Attribute):
            base = self.expr(node.value)
            attr = node.attr
            if (
                attr not in nm.STATIC_ATTRS
                and not attr.startswith(("_", "is_", "has_"))
                and attr not in self.index.static_fields
            ):
                flags = base & (TAINT | ARRAY)
                if flags and attr in self.index.array_fields:
                    flags |= ARRAY  # `sys.mass` with `mass: jax.Array` declared in a class here
                elif flags and attr in self.index.container_fields:
                    # `timestep.extras` with `extras: Dict`: a Python container of leaves (its truth is static)
                    flags = TAINT | CONTAINER | (ELEMS if flags & ARRAY else 0)
            if base & FRESH and not base & CONTAINER:
                flags |= FRESH  # a part of a value made during this call (`model.init(...).params`)
        elif isinstance(node, ast.Subscript):
            base = self.expr(node.value)
            index = self.expr(node.slice)
            flags = (base | (index & TAINT)) & (TAINT | ARRAY)
            if base & ELEMS:
                flags |= ARRAY
            if base & FRESH and not base & CONTAINER:
                flags |= FRESH  # `params = model.init(key, x)['params']`: made during this call
        elif isinstance(node, ast.Call):
            flags = self.call(node)
        elif isinstance(node, ast.BinOp):
            left = self.expr(node.left)
            right = self.expr(node.right)
            if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
                flags = 0
            elif (left | right) & CONTAINER and isinstance(node.op, (ast.Add, ast.Mult)):
                flags = container(left | right)  # list + list, tuple * n: still a Python container
            else:
                flags = ((left | right) & (TAINT | ARRAY)) | FRESH
        elif isinstance(node, ast.UnaryOp):
            flags = self.expr(node.operand) & (TAINT | ARRAY)
        elif isinstance(node, ast.BoolOp):
            flags = self._boolop(node)
        elif isinstance(node, ast.Compare):
            flags = self._compare(node)
        elif isinstance(node, ast.IfExp):
            self.expr(node.test)
            flags = self.expr(node.body) | self.expr(node.orelse)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            for elt in node.elts:
                flags |= self.expr(elt)
            flags = container(flags)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if key is not None:
                    self.expr(key)
            for value in node.values:
                flags |= self.expr(value)
            flags = container(flags)
        elif isinstance(node, _COMPS):
            flags = self._comprehension(node)
        elif isinstance(node, ast.Lambda):
            self._closure(node)
            return 0
        elif isinstance(node, ast.NamedExpr):
            flags = self.expr(node.value)
            self.assign(node.target, flags, node.value)
        elif isinstance(node, ast.JoinedStr):
            for value in node.values:
                self.expr(value)
            return 0
        elif isinstance(node, ast.FormattedValue):
            self.expr(node.value)
            return 0
        elif isinstance(node, ast.Starred):
            flags = self.expr(node.value)
        elif isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                if part is not None:
                    flags |= self.expr(part) & TAINT
        elif isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom)) and node.value is not None:
            flags = self.expr(node.value) & (TAINT | ARRAY)
        if flags:
            self.flags[id(node)] = self.flags.get(id(node), 0) | flags
        return flags

    def _boolop(self, node: ast.BoolOp) -> int:
        """``not isinstance(d, int) or d != 0``: later operands see what earlier ones proved."""
        saved, saved_parts = self.env, self.narrowed_parts
        self.env = dict(saved)
        flags = 0
        for value in node.values:
            known = self.constant(value)
            if known is not None and bool(known) is isinstance(node.op, ast.Or):
                break  # `training and ...` with training=False bound by partial: the rest never runs
            flags |= self.expr(value)
            positive, negative = narrowed_names(value)
            for name in positive if isinstance(node.op, ast.And) else negative:
                self.env[name] = self.name_flags(name) & ~(TAINT | ARRAY)
            if isinstance(node.op, ast.And):
                self.narrowed_parts = self.narrowed_parts | narrowed_parts(value)
        self.env, self.narrowed_parts = saved, saved_parts
        return flags & (TAINT | ARRAY | CONTAINER | FRESH)

    def constant(self, node: ast.expr) -> object | None:
        """The literal a parameter is bound to by ``functools.partial`` (None when unknown)."""
        if isinstance(node, ast.Name):
            facts = self.facts
            if (
                node.id in facts.constants
                and node.id not in facts.tainted_params
                and node.id not in self.bound
            ):
                value = facts.constants[node.id]
                return None if value is BOUND else value
        return None

    def _compare(self, node: ast.Compare) -> int:
        left = self.expr(node.left)
        flags = left
        for comparator in node.comparators:
            flags |= self.expr(comparator)
        if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return 0
        if all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            return 0  # membership tests on Python containers; `x in array` is rare in traced code
        for operand in (node.left, *node.comparators):
            if isinstance(operand, ast.Constant) and isinstance(operand.value, (str, bytes, type(None))):
                return 0  # compared with a string or None: a Python value, not an array
            if self._is_treedef(operand):
                return 0  # a PyTreeDef compares in Python (a tracer is never equal to one)
            if self._is_enum_member(operand):
                return 0  # `d.impl == Impl.WARP`: an enum member compares in Python
        if not flags & TAINT:
            return 0
        return TAINT | (flags & ARRAY)

    def _is_enum_member(self, node: ast.expr) -> bool:
        """``Impl.WARP``: an UPPER_CASE member of an enum class of this module, or of a CamelCase class
        imported from elsewhere (whose kind is unknown: an enum is the common case, and silence the safe
        guess)."""
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return False
        owner, member = node.value.id, node.attr
        if not (member.isupper() and owner[:1].isupper() and not owner.isupper()) or self.is_local(owner):
            return False
        cls = self.index.classes.get(owner)
        if cls is None:
            return self.index.names.qualify(node.value) is not None
        return any((nm.last_name(base) or "").endswith(("Enum", "Flag")) for base in cls.bases)

    def _is_treedef(self, node: ast.expr) -> bool:
        """A tree structure: ``tree_structure(x)`` or a name bound to one (``_, tree = tree_flatten(x)``)."""
        if isinstance(node, ast.Call):
            return _structure_call(self.qualify(node.func))
        if not isinstance(node, ast.Name):
            return False
        names = self.facts.treedef_names
        if names is None:
            names = self.facts.treedef_names = self._treedef_names()
        return node.id in names

    def _treedef_names(self) -> frozenset[str]:
        """Names this function binds to tree structures (assigned once, from a flatten or structure call)."""
        found: set[str] = set()
        for target, call in self.index.call_assignments(self.facts.func):
            qualified = self.qualify(call.func)
            if isinstance(target, ast.Name) and _structure_call(qualified):
                found.add(target.id)
            elif (
                isinstance(target, ast.Tuple)
                and len(target.elts) == 2
                and isinstance(target.elts[1], ast.Name)
                and nm.is_tree_flatten(qualified)
            ):
                found.add(target.elts[1].id)
        return frozenset(found)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> int:
        saved = self.env
        self.env = dict(saved)
        for gen in node.generators:
            it = self.expr(gen.iter)
            before = set(self.env)
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            keys = it & TAINT and iterates_keys(gen.iter, self.mappings, [*parts, *gen.ifs], gen.target)
            element = 0 if keys else self.element_flags(gen.iter, it)
            self.assign(gen.target, element, None, element_of=gen.iter)
            self.facts.comp_names.update(set(self.env) - before)
            for cond in gen.ifs:
                self.expr(cond)
        if isinstance(node, ast.DictComp):
            flags = self.expr(node.key) | self.expr(node.value)
        else:
            flags = self.expr(node.elt)
        self.env = saved
        return container(flags)


def _structure_call(qualified: str | None) -> bool:
    """``jax.tree_util.tree_structure`` / ``jax.tree.structure``: returns a PyTreeDef."""
    if not qualified or not qualified.startswith("jax."):
        return False
    last = qualified.rpartition(".")[2]
    return last == "tree_structure" or (last == "structure" and ".tree" in qualified)
