"""Where values come from, as the rules ask it: a mixin of :class:`jitscope.linter.context.ModuleContext`.

``origin`` (self, a parameter, a value made during the call, a closure, a module global...),
whether an object is a known Python container, whether a call mutates its receiver, and
whether an item assignment writes a JAX array or a mutable ref (Pallas, ``jax.new_ref``).
"""

from __future__ import annotations

import ast
from typing import Any, Literal

from jitscope.linter.analysis.module_index import ModuleIndex
from jitscope.linter.analysis import qualified_names as nm
from jitscope.linter.analysis.qualified_names import last_name
from jitscope.linter.analysis.taint_calls import MUTATORS
from jitscope.linter.analysis.taint_flags import ARRAY, CONTAINER, FRESH, FunctionFacts

Origin = Literal["self", "param", "fresh", "alias", "closure", "closure-fresh", "module", "global", "other"]

_REF_SUFFIXES = ("ref", "_smem", "_vmem", "_hbm", "scratch", "_sem", "_buf", "_buffer")
_REF_MODULES = ("jax.experimental.pallas", "jax._src.pallas")
_REF_MAKERS = ("new_ref(", "mutable_array(", "array_ref(", "empty_ref(")
#: list methods: their name alone says the receiver is a list
_LIST_MUTATORS = frozenset({"append", "extend", "insert", "appendleft", "extendleft"})
_CONTAINER_MAKERS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "Counter"})
_CONTAINER_NODES = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)

TracedFunction = FunctionFacts


class ValueOrigins:
    """Value origins and mutation questions about one module (see the module docstring)."""

    _index: ModuleIndex
    text: str
    memo: dict[str, Any]

    def origin(self, facts: TracedFunction, node: ast.expr) -> Origin:
        """Where the object ``node`` refers to comes from, as far as this function can tell."""
        root = root_name(node)
        if root is None:
            return "other"
        name = root.id
        if facts.self_name is not None and name == facts.self_name:
            return "self"
        if name in facts.comp_names:
            return "other"
        flags = facts.flags_of(root)
        args = facts.func.args
        if name in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}:
            return "fresh" if flags & FRESH else "param"
        if name in facts.local_names:
            return "fresh" if flags & FRESH else "alias"
        if name in facts.closure:
            return "closure-fresh" if facts.closure[name] & FRESH else "closure"
        if name in self._index.names.module_aliases or name in facts.local_aliases:
            return "module"
        if name in self._index.names.aliases:
            return "other"
        return "global"

    def uses_refs(self) -> bool:
        """True for modules that write to mutable refs (Pallas kernels, ``jax.new_ref``)."""
        cached = self.memo.get("uses_refs")
        if cached is None:
            aliases = self._index.names.aliases.values()
            cached = any(q.startswith(_REF_MODULES) for q in aliases) or any(
                m in self.text for m in _REF_MAKERS
            )
            self.memo["uses_refs"] = cached
        return bool(cached)

    def is_ref_write(self, target: ast.Subscript) -> bool:
        """``o_ref[...] = v``: a write to a mutable ref, which is how Pallas kernels and jax refs work."""
        index = target.slice
        if isinstance(index, ast.Constant) and index.value is Ellipsis:
            return True
        root = root_name(target)
        if root is not None and root.id.lower().endswith(_REF_SUFFIXES):
            return True
        return self.uses_refs()

    def known_container(self, facts: TracedFunction, node: ast.expr) -> bool:
        """True when ``node`` is known to be a Python list/dict/set (so ``.update()`` mutates it)."""
        if facts.flags_of(node) & CONTAINER:
            return True
        if isinstance(node, ast.Name):
            if facts.closure.get(node.id, 0) & CONTAINER:
                return True
            if node.id not in facts.local_names and node.id not in facts.closure:
                value = self._index.module_values.get(node.id)
                if isinstance(value, _CONTAINER_NODES):
                    return True
                if isinstance(value, ast.Call):
                    return last_name(value.func) in _CONTAINER_MAKERS
        return False

    def mutates(self, facts: TracedFunction, call: ast.Call) -> bool:
        """``x.append(v)`` always mutates; ``x.update(v)``/``x.pop()``/... only when ``x`` is a known
        container (``optimizer.update(...)`` is a functional API, not a dict update)."""
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr not in MUTATORS:
            return False
        return func.attr in _LIST_MUTATORS or _dict_call(call) or self.known_container(facts, func.value)

    def traces_its_argument(self, func: ast.expr) -> bool:
        """``jax.jit``, ``eqx.filter_jit``, ``jax.vmap``, ``lax.scan``, ``jax.grad``...: a call that traces
        the function it is given (not ``jax.tree.map``, which calls it eagerly outside traced code)."""
        qualified = self._index.names.qualify(func)
        return (
            nm.classify_transform(qualified) is not None
            or nm.is_body_taker(qualified)
            or (nm.is_tracing_caller(qualified) and not nm.is_tree_map(qualified))
        )

    @staticmethod
    def is_dict_method_call(call: ast.Call) -> bool:
        """``d.pop("k")``, ``d.setdefault("k", v)``, ``d.update(k=v)``: a dict changed in place."""
        return _dict_call(call)

    @staticmethod
    def is_array_update(facts: TracedFunction, target: ast.Subscript) -> bool:
        """Item assignment on a JAX array (JS204) rather than on a Python container (JS104)."""
        flags = facts.flags_of(target.value)
        if not flags & ARRAY or flags & CONTAINER:
            return False
        index = target.slice
        return not (isinstance(index, ast.Constant) and isinstance(index.value, str))


def _dict_call(call: ast.Call) -> bool:
    """``d.update(loss=v)``, ``d.update({"k": v})``, ``d.pop("k")``, ``d.setdefault("k", v)``: written as
    only a dict's methods are (a functional ``tx.update(grads, state)`` takes positional arrays; a
    ``spec.update(partitions=p)`` whose result is used returns a new object: JS104 reads ``update`` only
    as a statement, where dict.update's None is dropped)."""
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    first = call.args[0] if call.args else None
    if method in ("pop", "setdefault"):
        return isinstance(first, ast.Constant) and isinstance(first.value, str)
    if method == "update":
        keywords_only = bool(call.keywords) and not call.args and all(k.arg for k in call.keywords)
        return keywords_only or (len(call.args) == 1 and not call.keywords and isinstance(first, ast.Dict))
    return False


def root_name(node: ast.expr) -> ast.Name | None:
    """The name at the root of ``a.b[c].d``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node if isinstance(node, ast.Name) else None
