"""Jitted functions built by a project's own wrappers: ``step = make_jit(step_impl)``, ``@staged``.

Discovery sees ``jax.jit(f, ...)`` written out. Projects often wrap it in a *jit factory*: a
module-level ``def`` that applies a jit transform (``jax.jit``, ``jax.pmap``, ``filter_jit``) to
one of its parameters anywhere in its body, and returns the result or a closure that forwards
to it (``jitted = jax.jit(fn); def wrapper(*a): return jitted(*a); return wrapper``), or that
returns a jitted closure calling the parameter, or that hands the parameter to another jit
factory (so factories of factories count, at any depth). Factories of other linted modules that
this one imports come in from the runner (``index.imported_factories``), by the name they are
written with here (``staged`` or ``utils.staged``).

A factory's literal ``static_argnums``/``static_argnames`` carry over, also through a parameter
with a literal default (``None``: the caller's own keyword decides). Discovery treats a call or a
decorator naming a factory as the jit itself (an :class:`Entry` and a :class:`JitSite`); this
module also finds the assignments ``name = wrapper(func, ..., static_argnums=...)`` of any
callable given literal static keywords (the keywords say what it does, wherever it is defined).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from jitscope.linter.analysis import qualified_names as nm
from jitscope.linter.analysis.discovered import JitSite
from jitscope.linter.analysis.function_refs import (
    ResolvedFunction,
    innermost_function,
    loop_in_chain,
    resolve_function,
    target_label,
)
from jitscope.linter.analysis.module_index import DefNode, FactoryStatics, ModuleIndex
from jitscope.linter.analysis.parameters import all_params, literal_ints, literal_strs, param_defaults
from jitscope.linter.analysis.qualified_names import last_name
from jitscope.linter.analysis.source import match_lines, word_start_lines

_STATIC_KEYWORDS = ("static_argnums", "static_argnames")
#: pmap's spelling of static_argnums
_KEYWORD_ALIASES = {"static_broadcasted_argnums": "static_argnums"}
_FACTORY_KINDS = frozenset({"jit", "pmap", "filter_jit"})
#: ``name = wrapper(fn, ..., static_argnums=...)`` written on one line
_STATIC_RE = re.compile(
    r"^[ \t]*[\w.]+[ \t]*=[ \t]*[\w.]+\(.*\bstatic_arg(?:nums|names)[ \t]*=", re.MULTILINE
)
#: a line that can make a def a jit factory names ``jit`` or ``pmap`` as (the end of) a word
_JIT_WORD_END = re.compile(r"(?:jit|pmap)\b")
#: rounds of "a factory that calls a factory" followed inside one module
_FACTORY_ROUNDS = 4


def written_name(node: ast.expr) -> str | None:
    """``staged`` or ``utils.staged``: a callee as written, when it is a name or a dotted name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = written_name(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _jit_keywords(
    transform: ast.Call, func: DefNode, factories: dict[str, dict[str, ast.expr]], index: ModuleIndex
) -> dict[str, ast.expr] | None:
    """The static keywords of ``transform`` when it applies a jit (or a known factory) to a parameter
    of ``func`` (``jax.jit(fn, ...)``, ``partial(jax.jit, ...)(fn)``, ``compiled(fn)``), else None."""
    call, keywords_of = transform, transform
    if isinstance(call.func, ast.Call) and last_name(call.func.func) == "partial" and call.func.args:
        keywords_of, jit = call.func, call.func.args[0]  # partial(jax.jit, static_argnames=...)(fn)
    else:
        jit = call.func
    inherited: dict[str, ast.expr] = {}
    name = written_name(jit)
    if name is not None and name in factories:
        inherited = dict(factories[name])
    elif nm.classify_transform(index.names.qualify(jit)) not in _FACTORY_KINDS:
        return None
    first = call.args[0] if call.args else None
    if not (isinstance(first, ast.Name) and first.id in all_params(func)):
        return None
    defaults = dict(param_defaults(func))
    for keyword in keywords_of.keywords:
        key = _KEYWORD_ALIASES.get(keyword.arg or "", keyword.arg)
        if key not in _STATIC_KEYWORDS:
            continue
        value = keyword.value
        if isinstance(value, ast.Name) and value.id in defaults:
            value = defaults[value.id]  # a parameter with a default: the default, unless a call passes it
            if isinstance(value, ast.Constant) and value.value is None:
                inherited.pop(key, None)
                continue
        inherited[key] = value
    return inherited


def _forwarding_jit(stmt: ast.stmt, func: DefNode, index: ModuleIndex) -> dict[str, ast.expr] | None:
    """``@jax.jit def inner(*a): return fn(*a)`` inside the factory ``func``: the parameter ``fn``
    runs under the jit of the closure (its static keywords: the decorator's literal ones)."""
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = set(all_params(func))
    for dec in stmt.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(dec, ast.Call) and last_name(dec.func) == "partial" and dec.args:
            target = dec.args[0]
        if nm.classify_transform(index.names.qualify(target)) not in _FACTORY_KINDS:
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in params:
                return {}
    return None


def find_jit_factories(index: ModuleIndex) -> dict[str, dict[str, ast.expr]]:
    """Jit factories this module can call: its own module-level ones and the imported ones
    (``index.imported_factories``): name as written -> the static keywords of the jit they apply.
    Computed once per module (kept on ``index``); callers must not change what it returns."""
    if index.jit_factories is None:
        index.jit_factories = _find_jit_factories(index)
    return index.jit_factories


def _find_jit_factories(index: ModuleIndex) -> dict[str, dict[str, ast.expr]]:
    out: dict[str, dict[str, ast.expr]] = {
        name: _literal_keywords(statics) for name, statics in index.imported_factories.items()
    }
    text = index.parsed.text
    if "jit" not in text and "pmap" not in text:
        return out
    pattern = _JIT_WORD_END
    for _ in range(_FACTORY_ROUNDS):
        found = False
        for line in _top_def_lines(index, pattern):
            chain = index.statement_chain(line)
            top = chain[0]
            if top.name in out or not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            keywords = _statement_factory(index, top, chain, out)
            if keywords is not None:
                out[top.name] = keywords
                found = True
        if not found:
            break
        local = [name for name in out if name in index.defs]
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, local)) + r")\b")
    return out


def _top_def_lines(index: ModuleIndex, pattern: re.Pattern[str]) -> Iterator[int]:
    """Lines matching ``pattern`` inside the body of a module-level def."""
    last = 0
    for line, _ in word_start_lines(pattern, index.parsed.text):
        if line == last:
            continue
        last = line
        chain = index.statement_chain(line)
        if len(chain) > 1 and index.defs.get(getattr(chain[0], "name", "")) is chain[0]:
            yield line


def _statement_factory(
    index: ModuleIndex, top: DefNode, chain: list[ast.stmt], factories: dict[str, dict[str, ast.expr]]
) -> dict[str, ast.expr] | None:
    stmt = chain[-1]
    forwarded = _forwarding_jit(stmt, top, index)
    if forwarded is not None:
        return forwarded
    roots: list[ast.AST] = (
        list(stmt.decorator_list) if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else [stmt]
    )
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, ast.Call):
                keywords = _jit_keywords(node, top, factories, index)
                if keywords is not None:
                    return keywords
    return None


def factory_statics(index: ModuleIndex) -> dict[str, FactoryStatics]:
    """This module's own jit factories whose static arguments are literals (or absent): name ->
    (argnums, argnames), None for a keyword the factory does not set."""
    out: dict[str, FactoryStatics] = {}
    for name, keywords in find_jit_factories(index).items():
        if name in index.imported_factories:
            continue
        nums = literal_ints(keywords["static_argnums"]) if "static_argnums" in keywords else None
        names = literal_strs(keywords["static_argnames"]) if "static_argnames" in keywords else None
        if ("static_argnums" in keywords and nums is None) or ("static_argnames" in keywords and names is None):
            continue  # a keyword that is not a literal: unknown statics
        out[name] = (nums, names)
    return out


def _literal_keywords(statics: FactoryStatics) -> dict[str, ast.expr]:
    nums, names = statics
    out: dict[str, ast.expr] = {}
    if nums is not None:
        out["static_argnums"] = ast.Tuple([ast.Constant(n) for n in nums], ast.Load())
    if names is not None:
        out["static_argnames"] = ast.Tuple([ast.Constant(n) for n in names], ast.Load())
    return out


def find_wrapped_sites(index: ModuleIndex, known: list[JitSite]) -> list[JitSite]:
    """Jit sites made by static-keyword wrappers (see the module docstring); discovery makes the
    jit factories' sites."""
    text = index.parsed.text
    if "static_arg" not in text:
        return []
    seen = {id(site.node) for site in known}
    out: list[JitSite] = []
    for line, _ in match_lines(_STATIC_RE, text):
        chain = index.statement_chain(line)
        stmt = chain[-1] if chain else None
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.value, ast.Call):
            continue
        call = stmt.value
        if id(call) in seen or not call.args or nm.classify_transform(index.names.qualify(call.func)):
            continue
        keywords = {k.arg: k.value for k in call.keywords if k.arg in _STATIC_KEYWORDS}
        if not keywords or any(literal_ints(v) is None and literal_strs(v) is None for v in keywords.values()):
            continue
        resolved = resolve_function(index, call.args[0], chain)
        if not isinstance(resolved, ResolvedFunction) or isinstance(resolved.func, ast.Lambda):
            continue
        seen.add(id(call))
        out.append(
            JitSite(
                call,
                "jit",
                resolved.func,
                resolved.bound_method,
                literal_ints(keywords.get("static_argnums")),
                literal_strs(keywords.get("static_argnames")),
                keywords,
                innermost_function(chain),
                loop_in_chain(chain),
                False,
                target_label(stmt.targets[0]),
                list(chain),
            )
        )
    return out
