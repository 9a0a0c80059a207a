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
import functools
import itertools
import re

from jitscope.linter.analysis import qualified_names as nm
from jitscope.linter.analysis.discovered import Discovery, Entry, ExternalRef
from jitscope.linter.analysis.discovery_transforms import JIT_KINDS, TransformApplication
from jitscope.linter.analysis.jit_factories import find_jit_factories, written_name
from jitscope.linter.analysis.function_refs import (
    ResolvedFunction,
    decorator_label,
    header_roots,
    innermost_function,
    names_primitive,
    nondiff_count,
    resolve_function,
    walk_with_parents,
)
from jitscope.linter.analysis.module_index import DefNode, ModuleIndex, block_statements
from jitscope.linter.analysis.parameters import (
    all_params,
    positional_params,
    traced_params,
)
from jitscope.linter.analysis.qualified_names import words
from jitscope.linter.analysis.source import word_start_lines

_TRIGGER_WORDS = sorted(
    words(
        "jit pjit pmap vmap filter_jit named_jit filter_pmap filter_vmap filter_checkpoint shard_map checkpoint remat "
        "custom_jvp custom_vjp defjvp defvjp defjvps scan fori_loop while_loop for_loop cond switch map "
        "associative_scan custom_root custom_linear_solve reduce_window platform_dependent"
    )
)


def word_regex(words: list[str]) -> re.Pattern[str]:
    """``(?:w1|w2|...)\\b`` grouped by first letter, for :func:`word_start_lines` (which drops the
    matches inside a longer word): starting with the words' first letters, the pattern lets Python's
    regex engine skip to the next of them at C speed (the ``\\b`` before the words, checked on each
    match afterwards, would make it try every position: 25% slower even behind a lookahead)."""
    groups: dict[str, list[str]] = {}
    for word in sorted(set(words), key=len, reverse=True):
        groups.setdefault(word[0], []).append(re.escape(word[1:]))
    alternation = "|".join(
        f"{re.escape(first)}(?:{'|'.join(rest)})" for first, rest in sorted(groups.items())
    )
    return re.compile(rf"(?:{alternation})\b")


_TRIGGER_RE = word_regex(_TRIGGER_WORDS)


@functools.lru_cache(maxsize=256)
def _trigger_regex(extra: frozenset[str]) -> re.Pattern[str]:
    """The trigger words plus a module's own aliases of transforms. Cached: modules of one package
    import the same names (``from jax._src.lax import lax``), and compiling the alternation of a
    few hundred words costs more than the scan it serves."""
    return word_regex([*_TRIGGER_WORDS, *extra])
_RULE_METHODS = frozenset({"defjvp", "defvjp", "defjvps", "defjvp_all", "defvjp_all"})


# -- discovery -----------------------------------------------------------------------------------


class Discoverer(TransformApplication):
    """Walks the trigger lines of one module and collects entries and jit sites."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.out = Discovery()
        self._local_aliases: dict[int, dict[str, str]] = {}
        self._false_flags: frozenset[str] | None = None
        self.factories = find_jit_factories(index)

    def run(self) -> Discovery:
        text = self.index.parsed.text
        pattern = _TRIGGER_RE
        extra = [
            a for a, q in self.index.names.aliases.items() if a not in _TRIGGER_WORDS and _interesting(q)
        ]
        extra.extend(name.rpartition(".")[2] for name in self.factories)
        if extra:
            pattern = _trigger_regex(frozenset(extra))
        # Group the trigger lines by the innermost statement that contains them; each statement is
        # then examined once, looking only at the sub-expressions that span one of its trigger lines.
        statements: dict[int, tuple[list[ast.stmt], set[int]]] = {}
        last_line = -1
        for line, _ in word_start_lines(pattern, text):
            if line == last_line:
                continue
            last_line = line
            chain = self.index.statement_chain(line)
            if chain:
                statements.setdefault(id(chain[-1]), (chain, set()))[1].add(line)
        for chain, lines in statements.values():
            if not self._dead(chain):
                self._statement(chain, lines)
        return self.out

    def _dead(self, chain: list[ast.stmt]) -> bool:
        """Inside ``if JAX_MODE:`` where the module sets ``JAX_MODE = False`` and nothing else: code that
        never runs as written (TFP's NumPy backend, rewritten into a JAX one by a build step)."""
        flags = self._false_flags
        if flags is None:
            flags = self._false_flags = _false_flags(self.index.parsed.tree)
        if not flags:
            return False
        for stmt, inner in itertools.pairwise(chain):
            if isinstance(stmt, ast.If) and any(inner is s for s in stmt.body):
                test = stmt.test
                terms = (
                    test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
                )
                if any(isinstance(t, ast.Name) and t.id in flags for t in terms):
                    return True
        return False

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

    def _statement(self, chain: list[ast.stmt], lines: set[int]) -> None:
        stmt = chain[-1]
        local = self.local_aliases(chain)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._decorated(stmt, chain, local)
            roots: list[ast.AST] = [*stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d is not None)]
            self._walk(roots, chain[:-1], local, lines)
            return
        self._walk(header_roots(stmt), chain, local, lines)

    def _walk(
        self, roots: list[ast.AST], chain: list[ast.stmt], local: dict[str, str] | None, lines: set[int]
    ) -> None:
        for node, parent, in_comp in walk_with_parents(roots, lines):
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
            base = self.qualify(func.value, local)
            if base is not None and (base.startswith("jax.") or names_primitive(call)):
                return  # ad.defjvp(primitive, rule): primitive rules get static params
            nondiff = self._nondiff(func.value)
            named = [("fwd" if k.arg == "fwd" else "", k.value) for k in call.keywords]
            for i, (key, arg) in enumerate([*(("", a) for a in call.args), *named]):
                if func.attr == "defvjp" and (key == "fwd" or (i == 0 and not key)):
                    self._body(arg, chain, f"registered with .{func.attr}()", nondiff=nondiff)
                else:
                    self._body(arg, chain, f"registered with .{func.attr}()", leading=nondiff_count(nondiff))
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
        if kind is None:
            kind, keywords, qualified = self._factory(func, keywords, local, qualified)
        if kind is not None:
            target_expr = args[0] if args else keywords.get("fun") or keywords.get("f")
            if target_expr is None:
                return
            if kind == "vmap" and len(args) >= 2 and "in_axes" not in keywords:
                keywords = {**keywords, "in_axes": args[1]}
            self._apply(kind, target_expr, call, keywords, chain, parent, in_comp, qualified or kind)
            return
        if nm.is_body_taker(qualified):
            short = (qualified or "").rpartition(".")[2]
            for arg in (*args, *keywords.values()):
                items = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
                for item in items:
                    self._body(item, chain, f"passed to lax.{short}")

    def _factory(
        self, func: ast.expr, keywords: dict[str, ast.expr], local: dict[str, str] | None, label: str | None
    ) -> tuple[str | None, dict[str, ast.expr], str | None]:
        """A call of (or a ``partial`` of) a jit factory is a jit with the factory's static keywords, which
        the call's own override: (``"jit"``, keywords, label), or (None, keywords, label) for anything else."""
        if isinstance(func, ast.Call) and self._is_partial(func.func, local) and func.args:
            keywords = {**{k.arg: k.value for k in func.keywords if k.arg}, **keywords}
            func = func.args[0]
        name = written_name(func)
        if name is None or name not in self.factories:
            return None, keywords, label
        return "jit", {**self.factories[name], **keywords}, name

    def _is_partial(self, node: ast.expr, local: dict[str, str] | None) -> bool:
        return self.qualify(node, local) == "functools.partial"

    def _decorated(self, func: DefNode, chain: list[ast.stmt], local: dict[str, str] | None) -> None:
        enclosing = chain[:-1]
        self._register(func, enclosing)
        for dec in func.decorator_list:
            kind: str | None = None
            keywords: dict[str, ast.expr] = {}
            if isinstance(dec, ast.Attribute) and dec.attr in _RULE_METHODS:
                leading = nondiff_count(self._nondiff(dec.value))
                tainted = traced_params(self.index, func, "rule", {}, bound=leading)
                owner = innermost_function(enclosing)
                static = frozenset(positional_params(func)[:leading])
                self.out.entries.append(
                    Entry(
                        func, f"registered with @{dec.attr}", True, tainted, owner, static=static, kind="rule"
                    )
                )
                continue
            if isinstance(dec, ast.Call):
                inner = dec.func
                if self._is_partial(inner, local) and dec.args:
                    inner = dec.args[0]
                kind = nm.classify_transform(self.qualify(inner, local))
                keywords = {k.arg: k.value for k in dec.keywords if k.arg}
            else:
                inner = dec
                kind = nm.classify_transform(self.qualify(dec, local))
            in_class = bool(enclosing) and isinstance(enclosing[-1], ast.ClassDef)
            self_excluded = False
            if kind is None:
                given = "static_argnums" in keywords
                kind, keywords, name = self._factory(inner, keywords, local, None)
                # a method's factory that takes its static_argnums from the call may count them after
                # ``self`` (it holds ``self`` static itself): both numberings are taken as static
                self_excluded = (
                    in_class and given and name is not None and "static_argnums" not in self.factories[name]
                )
            if kind is None:
                continue
            label = decorator_label(dec)
            self._add_entry(func, f"decorated with @{label}", kind, keywords, enclosing, self_excluded)
            if kind in JIT_KINDS:
                owner = innermost_function(enclosing)
                self._add_site(
                    dec,
                    kind,
                    func,
                    self_excluded,
                    keywords,
                    owner,
                    enclosing,
                    False,
                    f"self.{func.name}" if in_class else func.name,
                )

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
            tainted = traced_params(
                self.index,
                resolved.func,
                kind,
                keywords,
                resolved.bound_method,
                leading + len(resolved.bound_args),
                resolved.bound_keywords,
            )
            static = frozenset(positional_params(resolved.func)[:leading]) if leading else frozenset()
            if nondiff:
                static = frozenset(all_params(resolved.func)) - tainted
            entry = Entry(resolved.func, reason, True, tainted, resolved.owner, static=static, kind="body")
            entry.constants = tuple(resolved.constants.items())
            self.out.entries.append(entry)
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
                found = {
                    kw.arg: kw.value
                    for kw in node.keywords
                    if kw.arg in ("nondiff_argnums", "nondiff_argnames")
                }
                if found:
                    return found
        return {}

    def _register(self, func: DefNode, enclosing: list[ast.stmt]) -> None:
        names = [
            s.name for s in enclosing if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        ]
        self.index.qualname.setdefault(id(func), ".".join([*names, func.name]))
        self.index.owner.setdefault(id(func), innermost_function(enclosing))
        if enclosing and isinstance(enclosing[-1], ast.ClassDef) and id(func) not in self.index.method_class:
            self.index.method_class[id(func)] = enclosing[-1]


# -- small helpers -------------------------------------------------------------------------------


def _interesting(qualified: str) -> bool:
    return nm.classify_transform(qualified) is not None or nm.is_lax_family(qualified)


def _false_flags(tree: ast.Module) -> frozenset[str]:
    """Module-level names only ever assigned ``False`` at module level (``JAX_MODE = False``)."""
    values: dict[str, list[ast.expr | None]] = {}
    for stmt in block_statements(tree.body):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    values.setdefault(target.id, []).append(stmt.value)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name):
            values.setdefault(stmt.target.id, []).append(stmt.value)
    return frozenset(
        name
        for name, assigned in values.items()
        if all(isinstance(v, ast.Constant) and v.value is False for v in assigned)
    )
