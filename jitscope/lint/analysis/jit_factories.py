"""Jitted functions built by a project's own wrappers: ``step = make_jit(step_impl)``.

Discovery sees ``jax.jit(f, ...)`` written out. Projects often wrap it: a function that
returns ``jax.jit(fn, static_argnums=...)`` (a jit factory), or a helper that takes a
function and passes ``static_argnums``/``static_argnames`` through to jit, possibly
defined in another module. The recompilation rules need those wrapped functions too, so
this module finds assignments ``name = wrapper(func, ...)`` where ``wrapper`` is

- a jit factory of this module: a ``def`` that returns a jit transform of one of its
  parameters (the jit's literal static_argnums/static_argnames carry over); or
- any callable given a function of this module together with literal ``static_argnums`` /
  ``static_argnames`` keywords (the keywords say what it does, wherever it is defined).

Each becomes a :class:`JitSite` of kind ``jit``. Like discovery, it only looks at the lines
that can hold such a call.
"""

from __future__ import annotations

import ast
import re

from jitscope.lint.analysis import qualified_names as nm
from jitscope.lint.analysis.discovered import JitSite
from jitscope.lint.analysis.function_refs import (
    ResolvedFunction,
    innermost_function,
    loop_in_chain,
    resolve_function,
    target_label,
)
from jitscope.lint.analysis.module_index import DefNode, ModuleIndex
from jitscope.lint.analysis.parameters import all_params, literal_ints, literal_strs
from jitscope.lint.analysis.source import match_lines

_STATIC_KEYWORDS = ("static_argnums", "static_argnames")
#: ``name = wrapper(fn, ..., static_argnums=...)`` written on one line
_STATIC_RE = re.compile(
    r"^[ \t]*[\w.]+[ \t]*=[ \t]*[\w.]+\(.*\bstatic_arg(?:nums|names)[ \t]*=", re.MULTILINE
)
#: ``return jax.jit(fn, ...)``: the line that makes a def a jit factory
_RETURN_JIT_RE = re.compile(r"^[ \t]+return[ \t]+[\w.]*\bjit\(", re.MULTILINE)


def _factory_keywords(index: ModuleIndex, func: DefNode, stmt: ast.stmt) -> dict[str, ast.expr] | None:
    """The jit keywords of a factory ``def f(fn, ...): return jax.jit(fn, ...)``, else None."""
    if not isinstance(stmt, ast.Return) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if nm.classify_transform(index.names.qualify(call.func)) != "jit" or not call.args:
        return None
    first = call.args[0]
    if isinstance(first, ast.Name) and first.id in all_params(func):
        return {k.arg: k.value for k in call.keywords if k.arg in _STATIC_KEYWORDS}
    return None


def find_jit_factories(index: ModuleIndex) -> dict[str, dict[str, ast.expr]]:
    """Module-level jit factories: name -> the static keywords of the jit they return."""
    out: dict[str, dict[str, ast.expr]] = {}
    for line, _ in match_lines(_RETURN_JIT_RE, index.parsed.text):
        chain = index.statement_chain(line)
        top = chain[0] if chain else None
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) and index.defs.get(top.name) is top:
            keywords = _factory_keywords(index, top, chain[-1])
            if keywords is not None:
                out[top.name] = keywords
    return out


def find_wrapped_sites(index: ModuleIndex, known: list[JitSite]) -> list[JitSite]:
    """Jit sites made by jit factories and static-keyword wrappers (see the module docstring)."""
    text = index.parsed.text
    if "static_arg" not in text and "jit(" not in text:
        return []
    factories = find_jit_factories(index) if "jit(" in text else {}
    patterns = [_STATIC_RE.pattern]
    if factories:
        patterns.append(r"\b(?:" + "|".join(map(re.escape, factories)) + r")\s*\(")
    pattern = re.compile("|".join(patterns), re.MULTILINE)
    seen = {id(site.node) for site in known}
    out: list[JitSite] = []
    for line, _ in match_lines(pattern, text):
        chain = index.statement_chain(line)
        stmt = chain[-1] if chain else None
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.value, ast.Call):
            continue
        call = stmt.value
        if id(call) in seen or not call.args or nm.classify_transform(index.names.qualify(call.func)):
            continue
        callee = call.func.id if isinstance(call.func, ast.Name) else None
        keywords = {k.arg: k.value for k in call.keywords if k.arg in _STATIC_KEYWORDS}
        if callee in factories:
            keywords = {**factories[callee], **keywords}
        elif not keywords:
            continue
        if any(literal_ints(v) is None and literal_strs(v) is None for v in keywords.values()):
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
