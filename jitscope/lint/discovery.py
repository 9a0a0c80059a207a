"""Finding traced code without importing it.

A regex over the source finds the few lines that can start tracing (``jit``,
``pmap``, ``vmap``, ``lax.scan`` and friends, ``custom_jvp``, ``checkpoint``, or an
import alias of one of them); only the statements on those lines are examined, so a
module without JAX costs one regex scan. Each hit becomes an :class:`Entry` (a
function that runs under tracing, with the parameters that hold traced values) and,
for ``jit``/``pmap``, a :class:`JitSite` that the recompilation rules inspect.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from jitscope.lint import names as nm
from jitscope.lint.index import DefNode, FuncNode, ModuleIndex, block_statements

_TRIGGER_WORDS = (
    "jit pjit pmap vmap filter_jit filter_pmap filter_vmap filter_checkpoint shard_map checkpoint remat "
    "custom_jvp custom_vjp defjvp defvjp defjvps lax scan fori_loop while_loop for_loop cond switch map "
    "associative_scan custom_root custom_linear_solve named_call"
).split()
_TRIGGER_RE = re.compile(r"\b(?:" + "|".join(_TRIGGER_WORDS) + r")\b")
_RULE_METHODS = frozenset({"defjvp", "defvjp", "defjvps", "defjvp_all", "defvjp_all"})
_PARTIAL = frozenset({"functools.partial", "partial"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_ARRAY_ANNOTATIONS = frozenset(
    {"Array", "ArrayLike", "ndarray", "Float", "Int", "Bool", "Shaped", "Num", "Real", "Inexact", "Integer",
     "Complex", "UInt", "Key", "PRNGKeyArray", "Tracer", "Float32", "Int32"}
)  # fmt: skip
_STATIC_KEYWORDS = {
    "jit": ("static_argnums", "static_argnames"),
    "pmap": ("static_broadcasted_argnums", "static_argnames"),
    "checkpoint": ("static_argnums", ""),
    "custom_jvp": ("nondiff_argnums", "nondiff_argnames"),
    "custom_vjp": ("nondiff_argnums", "nondiff_argnames"),
}
#: Transforms whose jitted functions the recompilation rules (JS30x) inspect.
JIT_KINDS = frozenset({"jit", "pmap"})
#: Wrappers that user code calls directly: a parameter with a default is usually left at it
#: (a Python constant, so static) unless a call site passes it.
DEFAULTS_STATIC_KINDS = frozenset({"jit", "pmap", "checkpoint", "custom_jvp", "custom_vjp"})


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
    in_function: FuncNode | None
    in_loop: bool
    immediately_called: bool
    bound_name: str | None
    chain: list[ast.stmt] = field(default_factory=list)


@dataclass(slots=True)
class ExternalRef:
    """A traced call into another module: resolved by the runner across the linted tree."""

    qualname: str
    reason: str
    #: taint of positional arguments, then keyword names that carry traced values
    positional: tuple[bool, ...] = ()
    keywords: frozenset[str] = frozenset()
    all_tainted: bool = False
    #: with ``all_tainted``: positions and names that stay static, and whether defaulted parameters do
    static_positions: tuple[int, ...] = ()
    static_names: frozenset[str] = frozenset()
    defaults_static: bool = False


@dataclass(slots=True)
class Discovery:
    entries: list[Entry] = field(default_factory=list)
    jit_sites: list[JitSite] = field(default_factory=list)
    external: list[ExternalRef] = field(default_factory=list)


# -- parameters ----------------------------------------------------------------------------------


def positional_params(func: FuncNode) -> list[str]:
    args = func.args
    return [a.arg for a in (*args.posonlyargs, *args.args)]


def all_params(func: FuncNode) -> list[str]:
    args = func.args
    out = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg:
        out.append(args.vararg.arg)
    if args.kwarg:
        out.append(args.kwarg.arg)
    return out


def self_param(index: ModuleIndex, func: FuncNode) -> str | None:
    """Name of ``self``/``cls`` when ``func`` is a method (not a staticmethod)."""
    if id(func) not in index.method_class or isinstance(func, ast.Lambda):
        return None
    for dec in func.decorator_list:
        if isinstance(dec, ast.Name) and dec.id == "staticmethod":
            return None
    params = positional_params(func)
    return params[0] if params else None


def literal_ints(node: ast.expr | None) -> tuple[int, ...] | None:
    if node is None:
        return ()
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    out: list[int] = []
    for item in items:
        sign = 1
        if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub):
            sign, item = -1, item.operand
        if not (isinstance(item, ast.Constant) and type(item.value) is int):
            return None
        out.append(sign * item.value)
    return tuple(out)


def literal_strs(node: ast.expr | None) -> tuple[str, ...] | None:
    if node is None:
        return ()
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    out: list[str] = []
    for item in items:
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            return None
        out.append(item.value)
    return tuple(out)


def _is_array_annotation(node: ast.expr | None) -> bool:
    if node is None:
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in _ARRAY_ANNOTATIONS:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr in _ARRAY_ANNOTATIONS:
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "Array" in sub.value:
            return True
    return False


def traced_params(
    index: ModuleIndex,
    func: FuncNode,
    kind: str,
    keywords: dict[str, ast.expr],
    bound_method: bool = False,
    bound: int = 0,
    bound_names: frozenset[str] = frozenset(),
    defaults_static: bool = False,
) -> frozenset[str]:
    """Parameters of ``func`` that hold traced values when ``kind`` traces it."""
    params = all_params(func)
    positional = positional_params(func)
    skip: set[str] = set()
    me = self_param(index, func)
    if me is not None:
        skip.add(me)
    if bound_method and positional:
        skip.add(positional[0])
        positional = positional[1:]
    skip.update(positional[:bound])
    skip.update(bound_names)
    if kind in ("filter_jit", "filter_vmap"):
        args = func.args
        annotated = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if _is_array_annotation(a.annotation)}
        return frozenset(p for p in params if p in annotated and p not in skip)
    nums_kw, names_kw = _STATIC_KEYWORDS.get(kind, ("", ""))
    static: set[str] = set()
    if kind == "vmap":
        axes = keywords.get("in_axes")
        if isinstance(axes, (ast.Tuple, ast.List)):
            for i, axis in enumerate(axes.elts):
                if isinstance(axis, ast.Constant) and axis.value is None and i < len(positional):
                    static.add(positional[i])
    for key in (nums_kw, names_kw):
        if not key or key not in keywords:
            continue
        value = keywords[key]
        if key == names_kw:
            strs = literal_strs(value)
            if strs is None:
                return frozenset()
            static.update(strs)
        else:
            ints = literal_ints(value)
            if ints is None:
                return frozenset()
            for i in ints:
                if -len(positional) <= i < len(positional):
                    static.add(positional[i])
    if defaults_static:
        static.update(defaulted_params(func))
    return frozenset(p for p in params if p not in static and p not in skip)


def defaulted_params(func: FuncNode) -> set[str]:
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    out = {a.arg for a in positional[len(positional) - len(args.defaults) :]}
    out.update(a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=False) if d is not None)
    return out


# -- discovery -----------------------------------------------------------------------------------


class Discoverer:
    """Walks the trigger lines of one module and collects entries and jit sites."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.out = Discovery()
        self._local_aliases: dict[int, dict[str, str]] = {}

    def run(self) -> Discovery:
        text = self.index.parsed.text
        pattern = _TRIGGER_RE
        extra = [a for a, q in self.index.names.aliases.items() if a not in _TRIGGER_WORDS and _interesting(q)]
        if extra:
            pattern = re.compile(_TRIGGER_RE.pattern[:-3] + "|" + "|".join(map(re.escape, extra)) + r")\b")
        seen: set[int] = set()
        line, last = 1, 0
        last_line = -1
        for m in pattern.finditer(text):
            line += text.count("\n", last, m.start())
            last = m.start()
            if line == last_line:
                continue
            last_line = line
            chain = self.index.statement_chain(line)
            if not chain or id(chain[-1]) in seen:
                continue
            seen.add(id(chain[-1]))
            self._statement(chain)
        return self.out

    # -- helpers ---------------------------------------------------------------------------------

    def local_aliases(self, chain: list[ast.stmt]) -> dict[str, str] | None:
        """Imports made inside the enclosing functions (``def f(): from jax import lax``)."""
        merged: dict[str, str] | None = None
        for stmt in chain:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            aliases = self._local_aliases.get(id(stmt))
            if aliases is None:
                imports = nm.ImportMap()
                for sub in block_statements(stmt.body):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)):
                        imports.add_import(sub, self.index.module, self.index.is_package)
                aliases = imports.aliases
                self._local_aliases[id(stmt)] = aliases
            if aliases:
                merged = {**(merged or {}), **aliases}
        return merged

    def qualify(self, node: ast.expr, local: dict[str, str] | None) -> str | None:
        return self.index.names.qualify(node, local)

    def _statement(self, chain: list[ast.stmt]) -> None:
        stmt = chain[-1]
        local = self.local_aliases(chain)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._decorated(stmt, chain, local)
            roots: list[ast.AST] = [*stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d is not None)]
            self._walk(roots, chain[:-1], local)
            return
        self._walk(header_roots(stmt), chain, local)

    def _walk(self, roots: list[ast.AST], chain: list[ast.stmt], local: dict[str, str] | None) -> None:
        for node, parent, in_comp in walk_with_parents(roots):
            if isinstance(node, ast.Call):
                self._call(node, parent, in_comp, chain, local)

    def _call(
        self,
        call: ast.Call,
        parent: ast.AST | None,
        in_comp: bool,
        chain: list[ast.stmt],
        local: dict[str, str] | None,
    ) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _RULE_METHODS:
            nondiff = self._nondiff(func.value)
            for i, arg in enumerate((*call.args, *(k.value for k in call.keywords))):
                if func.attr == "defvjp" and i == 0:
                    self._body(arg, chain, f"registered with .{func.attr}()", nondiff=nondiff)
                else:
                    self._body(arg, chain, f"registered with .{func.attr}()", leading=_count(nondiff))
            return
        qualified = self.qualify(func, local)
        kind = nm.classify_transform(qualified)
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        args = list(call.args)
        if kind is None and isinstance(func, ast.Call) and self._is_partial(func.func, local) and func.args:
            # partial(jax.jit, static_argnums=...)(f)
            kind = nm.classify_transform(self.qualify(func.args[0], local))
            keywords = {**{k.arg: k.value for k in func.keywords if k.arg}, **keywords}
            qualified = "partial"
        if kind is not None:
            target_expr = args[0] if args else keywords.get("fun") or keywords.get("f")
            if target_expr is None:
                return
            self._apply(kind, target_expr, call, keywords, chain, parent, in_comp, qualified or kind)
            return
        if nm.is_body_taker(qualified):
            short = (qualified or "").rpartition(".")[2]
            for arg in (*args, *keywords.values()):
                items = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
                for item in items:
                    self._body(item, chain, f"passed to lax.{short}")

    def _is_partial(self, node: ast.expr, local: dict[str, str] | None) -> bool:
        return self.qualify(node, local) == "functools.partial"

    def _decorated(self, func: DefNode, chain: list[ast.stmt], local: dict[str, str] | None) -> None:
        enclosing = chain[:-1]
        self._register(func, enclosing)
        for dec in func.decorator_list:
            kind: str | None = None
            keywords: dict[str, ast.expr] = {}
            if isinstance(dec, ast.Attribute) and dec.attr in _RULE_METHODS:
                leading = _count(self._nondiff(dec.value))
                tainted = traced_params(self.index, func, "rule", {}, bound=leading)
                owner = _innermost_function(enclosing)
                static = frozenset(positional_params(func)[:leading])
                self.out.entries.append(Entry(func, f"registered with @{dec.attr}", True, tainted, owner, static=static))
                continue
            if isinstance(dec, ast.Call):
                inner = dec.func
                if self._is_partial(inner, local) and dec.args:
                    kind = nm.classify_transform(self.qualify(dec.args[0], local))
                else:
                    kind = nm.classify_transform(self.qualify(inner, local))
                keywords = {k.arg: k.value for k in dec.keywords if k.arg}
            else:
                kind = nm.classify_transform(self.qualify(dec, local))
            if kind is None:
                continue
            label = _decorator_label(dec)
            self._add_entry(func, f"decorated with @{label}", kind, keywords, enclosing)
            if kind in JIT_KINDS:
                owner = _innermost_function(enclosing)
                in_class = bool(enclosing) and isinstance(enclosing[-1], ast.ClassDef)
                self._add_site(dec, kind, func, False, keywords, owner, enclosing, False,
                               f"self.{func.name}" if in_class else func.name)  # fmt: skip

    def _apply(
        self,
        kind: str,
        target_expr: ast.expr,
        call: ast.Call,
        keywords: dict[str, ast.expr],
        chain: list[ast.stmt],
        parent: ast.AST | None,
        in_comp: bool,
        label: str,
    ) -> None:
        resolved = resolve_function(self.index, target_expr, chain, self.local_aliases(chain))
        target: FuncNode | None = None
        bound_method = False
        reason = f"passed to {_short(label)}()"
        defaults = kind in DEFAULTS_STATIC_KINDS
        if isinstance(resolved, ResolvedFunction):
            target, bound_method = resolved.func, resolved.bound_method
            tainted = traced_params(self.index, target, kind, keywords, bound_method,
                                    len(resolved.bound_args), resolved.bound_keywords, defaults)  # fmt: skip
            everything = traced_params(self.index, target, kind, keywords, bound_method,
                                       len(resolved.bound_args), resolved.bound_keywords)  # fmt: skip
            static = frozenset(all_params(target)) - everything - set(positional_params(target)[: len(resolved.bound_args)])
            self.out.entries.append(Entry(target, reason, True, tainted, resolved.owner, everything - tainted, static))
        elif isinstance(resolved, str) and kind not in ("filter_jit", "filter_vmap"):
            nums_kw, names_kw = _STATIC_KEYWORDS.get(kind, ("", ""))
            nums = literal_ints(keywords.get(nums_kw)) if nums_kw else ()
            names = literal_strs(keywords.get(names_kw)) if names_kw else ()
            if nums is not None and names is not None:
                self.out.external.append(
                    ExternalRef(resolved, reason, all_tainted=True, static_positions=nums,
                                static_names=frozenset(names), defaults_static=defaults)  # fmt: skip
                )
        if kind in JIT_KINDS:
            bound_name = None
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
                bound_name = _target_label(parent.targets[0])
            immediately = isinstance(parent, ast.Call) and parent.func is call
            owner = _innermost_function(chain)
            self._add_site(call, kind, target, bound_method, keywords, owner, chain, in_comp, bound_name, immediately)

    def _body(
        self,
        expr: ast.expr,
        chain: list[ast.stmt],
        reason: str,
        leading: int = 0,
        nondiff: dict[str, ast.expr] | None = None,
    ) -> None:
        resolved = resolve_function(self.index, expr, chain, self.local_aliases(chain))
        if isinstance(resolved, ResolvedFunction):
            kind, keywords = ("custom_vjp", nondiff) if nondiff else ("body", {})
            tainted = traced_params(self.index, resolved.func, kind, keywords, resolved.bound_method,
                                    leading + len(resolved.bound_args), resolved.bound_keywords)  # fmt: skip
            static = frozenset(positional_params(resolved.func)[:leading]) if leading else frozenset()
            if nondiff:
                static = frozenset(all_params(resolved.func)) - tainted
            self.out.entries.append(Entry(resolved.func, reason, True, tainted, resolved.owner, static=static))
        elif isinstance(resolved, str):
            self.out.external.append(ExternalRef(resolved, reason, all_tainted=True))

    def _nondiff(self, base: ast.expr) -> dict[str, ast.expr]:
        """``nondiff_argnums``/``nondiff_argnames`` of the custom_jvp/custom_vjp function ``base`` names."""
        if not isinstance(base, ast.Name):
            return {}
        func = self.index.defs.get(base.id)
        candidates: list[ast.expr] = list(func.decorator_list) if func is not None else []
        value = self.index.module_values.get(base.id)
        if func is None and isinstance(value, ast.Call):
            candidates.append(value)
        for node in candidates:
            if isinstance(node, ast.Call):
                found = {kw.arg: kw.value for kw in node.keywords if kw.arg in ("nondiff_argnums", "nondiff_argnames")}
                if found:
                    return found
        return {}

    def _register(self, func: DefNode, enclosing: list[ast.stmt]) -> None:
        names = [s.name for s in enclosing if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        self.index.qualname.setdefault(id(func), ".".join([*names, func.name]))
        self.index.owner.setdefault(id(func), _innermost_function(enclosing))
        if enclosing and isinstance(enclosing[-1], ast.ClassDef) and id(func) not in self.index.method_class:
            self.index.method_class[id(func)] = enclosing[-1]

    def _add_entry(
        self, func: DefNode, reason: str, kind: str, keywords: dict[str, ast.expr], enclosing: list[ast.stmt]
    ) -> None:
        tainted = traced_params(self.index, func, kind, keywords, defaults_static=kind in DEFAULTS_STATIC_KINDS)
        everything = traced_params(self.index, func, kind, keywords)
        owner = _innermost_function(enclosing)
        static = frozenset(all_params(func)) - everything
        self.out.entries.append(Entry(func, reason, True, tainted, owner, everything - tainted, static))

    def _add_site(
        self,
        node: ast.expr,
        kind: str,
        target: FuncNode | None,
        bound_method: bool,
        keywords: dict[str, ast.expr],
        owner: FuncNode | None,
        chain: list[ast.stmt],
        in_comp: bool,
        bound_name: str | None,
        immediately: bool = False,
    ) -> None:
        nums_kw, names_kw = _STATIC_KEYWORDS.get(kind, ("", ""))
        nums = literal_ints(keywords.get(nums_kw)) if nums_kw else ()
        names = literal_strs(keywords.get(names_kw)) if names_kw else ()
        in_loop = in_comp or _loop_in_chain(chain)
        site = JitSite(node, kind, target, bound_method, nums, names, keywords, owner, in_loop, immediately,
                       bound_name, list(chain))  # fmt: skip
        self.out.jit_sites.append(site)


@dataclass(slots=True)
class ResolvedFunction:
    func: FuncNode
    owner: FuncNode | None
    bound_method: bool = False
    bound_args: tuple[ast.expr, ...] = ()
    bound_keywords: frozenset[str] = frozenset()


def resolve_function(
    index: ModuleIndex, expr: ast.expr, chain: list[ast.stmt], local: dict[str, str] | None = None
) -> ResolvedFunction | str | None:
    """The function an expression refers to: a def/lambda in this module, a qualified name
    in another module (str), or None when it cannot be known statically."""
    if isinstance(expr, ast.Lambda):
        owner = _innermost_function(chain)
        index.owner.setdefault(id(expr), owner)
        prefix = index.name_of(owner) + "." if owner is not None else ""
        index.qualname.setdefault(id(expr), prefix + "<lambda>")
        return ResolvedFunction(expr, owner)
    if isinstance(expr, ast.Call) and index.names.qualify(expr.func, local) == "functools.partial" and expr.args:
        inner = resolve_function(index, expr.args[0], chain, local)
        if isinstance(inner, ResolvedFunction):
            inner.bound_args = tuple(expr.args[1:])
            inner.bound_keywords = frozenset(k.arg for k in expr.keywords if k.arg)
        return inner
    functions = [s for s in chain if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if isinstance(expr, ast.Name):
        for func in reversed(functions):
            found = index.local_defs(func).get(expr.id)
            if found is not None:
                return ResolvedFunction(found, func)
        if expr.id in index.defs:
            return ResolvedFunction(index.defs[expr.id], None)
        return index.names.qualify(expr, local)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        base = expr.value.id
        if functions:
            method = functions[-1] if len(functions) else None
            classes = [s for s in chain if isinstance(s, ast.ClassDef)]
            if method is not None and classes and self_param(index, method) == base:
                methods = index.methods.get(id(classes[-1]))
                if methods is None:
                    methods = {s.name: s for s in classes[-1].body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
                found_method = methods.get(expr.attr)
                if found_method is not None:
                    index.method_class.setdefault(id(found_method), classes[-1])
                    return ResolvedFunction(found_method, None, bound_method=True)
        cls = index.classes.get(base)
        if cls is not None:
            found_method = index.methods.get(id(cls), {}).get(expr.attr)
            if found_method is not None:
                return ResolvedFunction(found_method, None)
        return index.names.qualify(expr, local)
    return None


# -- small helpers -------------------------------------------------------------------------------


def header_roots(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions of a statement that are not nested statements."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, (ast.While, ast.If)):
        return [stmt.test]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        return [h.type for h in stmt.handlers if h.type is not None]
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    if isinstance(stmt, ast.ClassDef):
        return [*stmt.decorator_list, *stmt.bases, *stmt.keywords]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return list(stmt.decorator_list)
    return [stmt]


def walk_with_parents(roots: list[ast.AST]) -> Iterator[tuple[ast.AST, ast.AST | None, bool]]:
    """Every node under ``roots`` with its parent and whether it sits inside a comprehension."""
    stack: list[tuple[ast.AST, ast.AST | None, bool]] = [(r, None, False) for r in reversed(roots)]
    while stack:
        node, parent, in_comp = stack.pop()
        yield node, parent, in_comp
        inner = in_comp or isinstance(node, _COMPS)
        children = list(ast.iter_child_nodes(node))
        for child in reversed(children):
            stack.append((child, node, inner))


def _loop_in_chain(chain: list[ast.stmt]) -> bool:
    for stmt in reversed(chain):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        if isinstance(stmt, _LOOPS):
            return True
    return False


def _innermost_function(chain: list[ast.stmt]) -> DefNode | None:
    for stmt in reversed(chain):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return stmt
    return None


def _count(nondiff: dict[str, ast.expr]) -> int:
    """How many leading parameters of a bwd/jvp rule receive the non-differentiable arguments."""
    nums = literal_ints(nondiff.get("nondiff_argnums")) or ()
    names = literal_strs(nondiff.get("nondiff_argnames")) or ()
    return len(nums) + len(names)


def _interesting(qualified: str) -> bool:
    return nm.classify_transform(qualified) is not None or nm.is_lax_family(qualified)


def _target_label(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return f"{target.value.id}.{target.attr}"
    return None


def _decorator_label(dec: ast.expr) -> str:
    node = dec.func if isinstance(dec, ast.Call) else dec
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every expression
        text = "decorator"
    if isinstance(dec, ast.Call) and text in ("partial", "functools.partial") and dec.args:
        return f"{text}({ast.unparse(dec.args[0])}, ...)"
    return text


def _short(label: str) -> str:
    return label if label in ("partial",) else label.rpartition(".")[2] if label.startswith("jax._src") else label
