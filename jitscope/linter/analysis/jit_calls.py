"""Call sites of jitted functions, and the loops around them.

The recompilation rules (JS301, JS302, JS304) look at how a jitted function is called:
with which arguments in its static positions, inside which loops, with what loop
variables. Like discovery, this only visits the lines where a jitted name is
followed by ``(``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from jitscope.linter.analysis.discovered import JitSite
from jitscope.linter.analysis.function_refs import header_roots, walk_with_parents
from jitscope.linter.analysis.module_index import DefNode, ModuleIndex, block_statements, target_names
from jitscope.linter.analysis.parameters import all_params, literal_ints, literal_strs, positional_params
from jitscope.linter.analysis.qualified_names import last_name
from jitscope.linter.analysis.source import word_start_lines

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@dataclass(slots=True)
class CallSite:
    """One call of a jitted function."""

    call: ast.Call
    site: JitSite
    function: DefNode | None
    #: enclosing loops inside the same function, outermost first
    loops: list[ast.stmt] = field(default_factory=list)
    #: names that change from one iteration to the next (loop targets, counters, comprehension variables)
    loop_vars: set[str] = field(default_factory=set)
    in_comp: bool = False
    #: targets of enclosing loops and comprehensions over a small literal (``for lr in [1e-2, 1e-3]``), which
    #: ``loop_vars`` leaves out (a few modes compiled once each on purpose) -> the literal's values
    sweeps: dict[str, tuple[object, ...]] = field(default_factory=dict)

    @property
    def in_loop(self) -> bool:
        return bool(self.loops) or self.in_comp


def static_params(site: JitSite) -> set[str]:
    """Names of the target's parameters that the site marks static (literal argnums/argnames)."""
    target = site.target
    if target is None:
        return set()
    positional = positional_params(target)
    if site.bound_method:
        positional = positional[1:]
    out: set[str] = set()
    nums_key = "static_broadcasted_argnums" if site.kind == "pmap" else "static_argnums"
    for i in literal_ints(site.keywords.get(nums_key)) or ():
        if -len(positional) <= i < len(positional):
            out.add(positional[i])
    out.update(literal_strs(site.keywords.get("static_argnames")) or ())
    return out


def argument_for(site: JitSite, call: ast.Call) -> dict[str, ast.expr]:
    """Map parameter names of the jitted target to the argument expressions of ``call``."""
    target = site.target
    if target is None:
        return {}
    positional = positional_params(target)
    decorated_method = (
        not isinstance(target, ast.Lambda)
        and any(d is site.node for d in target.decorator_list)
        and (site.bound_name or "").startswith("self.")
    )
    if site.bound_method or decorated_method:
        positional = positional[1:]
    out: dict[str, ast.expr] = {}
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if i < len(positional):
            out[positional[i]] = arg
    for kw in call.keywords:
        if kw.arg:
            out[kw.arg] = kw.value
    return out


def jitted_names(jit_sites: list[JitSite]) -> dict[str, JitSite]:
    """Names bound to jit/pmap-wrapped functions (``step``, ``self.step``) -> the site."""
    out: dict[str, JitSite] = {}
    for site in jit_sites:
        if site.bound_name and site.target is not None:
            out.setdefault(site.bound_name, site)
    return out


def find_call_sites(index: ModuleIndex, jit_sites: list[JitSite]) -> list[CallSite]:
    """Every call of a jitted name in the module."""
    jitted = jitted_names(jit_sites)
    found: list[CallSite] = []
    if not jitted:
        return found
    short = sorted({name.rpartition(".")[2] for name in jitted})
    pattern = re.compile(r"(?:" + "|".join(map(re.escape, short)) + r")\s*\(")  # \b: word_start_lines
    text = index.parsed.text
    seen: set[int] = set()
    for line, _ in word_start_lines(pattern, text):
        chain = index.statement_chain(line)
        if not chain or id(chain[-1]) in seen:
            continue
        seen.add(id(chain[-1]))
        found.extend(_sites_in(chain, jitted, index.module_values))
    return found


def _sites_in(
    chain: list[ast.stmt], jitted: dict[str, JitSite], module_values: dict[str, ast.expr | None]
) -> list[CallSite]:
    function: DefNode | None = None
    loops: list[ast.stmt] = []
    for stmt in chain:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function, loops = stmt, []
        elif isinstance(stmt, ast.ClassDef):
            function, loops = None, []
        elif isinstance(stmt, _LOOPS) and stmt is not chain[-1]:
            loops.append(stmt)
    innermost = chain[-1]
    if isinstance(innermost, _LOOPS):
        loops.append(innermost)
    loop_vars = _loop_vars(loops, function, module_values)
    headers = [(s.target, s.iter) for s in loops if isinstance(s, (ast.For, ast.AsyncFor))]
    sweeps = _sweeps(headers, function, module_values)
    out: list[CallSite] = []
    for node, _, in_comp in walk_with_parents(header_roots(innermost)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        key = None
        if isinstance(func, ast.Name) and func.id in jitted:
            key = func.id
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and f"self.{func.attr}" in jitted
        ):
            key = f"self.{func.attr}"
        if key is None:
            continue
        site = jitted[key]
        if site.target is function:
            continue
        comp_vars = _comprehension_vars(innermost) if in_comp else set()
        comp_sweeps = _sweeps(_comprehension_headers(innermost), function, module_values) if in_comp else {}
        changing = loop_vars | comp_vars
        out.append(CallSite(node, site, function, list(loops), changing, in_comp, sweeps | comp_sweeps))
    return out


def _loop_vars(
    loops: list[ast.stmt], function: DefNode | None, module_values: dict[str, ast.expr | None]
) -> set[str]:
    names: set[str] = set()
    for loop in loops:
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            if _few_values(loop.iter, function) or _module_constant(loop.iter, function, module_values):
                continue
            names.update(target_names(loop.target))
        else:
            for stmt in block_statements(loop.body):  # type: ignore[attr-defined]
                if isinstance(stmt, ast.AugAssign):
                    names.update(target_names(stmt.target))
    return names


def _small_literal(node: ast.expr) -> bool:
    """``for mode in ("a", "b")``: a handful of values, compiled once each on purpose."""
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and all(
        isinstance(e, ast.Constant) for e in node.elts
    )


def _few_values(node: ast.expr, function: DefNode | None, depth: int = 0) -> bool:
    """A small literal, ``itertools.product``/``zip`` of them, or a local name bound to one."""
    if _small_literal(node):
        return True
    if depth > 2:
        return False
    if (
        isinstance(node, ast.Call)
        and node.args
        and last_name(node.func) in ("product", "zip", "enumerate", "reversed", "sorted")
    ):
        return all(_few_values(a, function, depth + 1) for a in node.args if not isinstance(a, ast.Starred))
    if isinstance(node, ast.Name) and function is not None:
        for stmt in block_statements(function.body):
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == node.id
            ):
                return _few_values(stmt.value, function, depth + 1)
    return False


def _module_constant(
    node: ast.expr, function: DefNode | None, module_values: dict[str, ast.expr | None]
) -> bool:
    """A module-level name bound to a small literal (``MODES = ("train", "eval")``), not rebound locally."""
    if not isinstance(node, ast.Name) or (function is not None and node.id in all_params(function)):
        return False
    value = module_values.get(node.id)
    return value is not None and _small_literal(value)


def _sweeps(
    headers: list[tuple[ast.expr, ast.expr]],
    function: DefNode | None,
    module_values: dict[str, ast.expr | None],
) -> dict[str, tuple[object, ...]]:
    """``for lr in [1e-2, 1e-3]`` (or over a name bound to such a literal, here or at module level) -> the
    literal's values."""
    out: dict[str, tuple[object, ...]] = {}
    for target, iterable in headers:
        values = _literal_values(iterable, function, module_values)
        if values is not None and isinstance(target, ast.Name):
            out[target.id] = values
    return out


def _literal_values(
    node: ast.expr, function: DefNode | None, module_values: dict[str, ast.expr | None]
) -> tuple[object, ...] | None:
    if isinstance(node, ast.Name) and function is not None and node.id not in all_params(function):
        for stmt in block_statements(function.body):
            if isinstance(stmt, ast.Assign) and any(node.id in target_names(t) for t in stmt.targets):
                node = stmt.value
                break
        else:
            node = module_values.get(node.id) or node
    elif isinstance(node, ast.Name) and function is None:
        node = module_values.get(node.id) or node
    if not _small_literal(node):
        return None
    return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]


def _comprehension_headers(stmt: ast.stmt) -> list[tuple[ast.expr, ast.expr]]:
    return [(n.target, n.iter) for n in ast.walk(stmt) if isinstance(n, ast.comprehension)]


def _comprehension_vars(stmt: ast.stmt) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.comprehension) and not _small_literal(node.iter):
            names.update(target_names(node.target))
    return names


def uses(node: ast.AST, names: set[str]) -> bool:
    """True when ``node`` reads any of ``names``."""
    if not names:
        return False
    return any(isinstance(sub, ast.Name) and sub.id in names for sub in ast.walk(node))
