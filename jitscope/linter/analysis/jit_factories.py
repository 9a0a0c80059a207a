"""Jitted functions built by a project's own wrappers: ``step = make_jit(step_impl)``.

Discovery sees ``jax.jit(f, ...)`` written out. Projects often wrap it: a function that
returns ``jax.jit(fn, static_argnums=...)`` (a jit factory), or a helper that takes a
function and passes ``static_argnums``/``static_argnames`` through to jit, possibly
defined in another module. The recompilation rules need those wrapped functions too, so
this module finds assignments ``name = wrapper(func, ...)`` where ``wrapper`` is

- a jit factory of this module or of another linted module it imports (the runner passes
  those in): a ``def`` that returns a jit transform of one of its parameters, written
  ``jax.jit(fn, ...)`` or ``partial(jax.jit, ...)(fn)`` (the jit's literal static_argnums/
  static_argnames carry over, also through a parameter with a literal default); or
- any callable given a function of this module together with literal ``static_argnums`` /
  ``static_argnames`` keywords (the keywords say what it does, wherever it is defined).

A factory used as a decorator (``@compiled`` on a def) makes a site too. Each becomes a
:class:`JitSite` of kind ``jit``. Like discovery, it only looks at the lines
that can hold such a call.
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
#: ``name = wrapper(fn, ..., static_argnums=...)`` written on one line
_STATIC_RE = re.compile(
    r"^[ \t]*[\w.]+[ \t]*=[ \t]*[\w.]+\(.*\bstatic_arg(?:nums|names)[ \t]*=", re.MULTILINE
)
#: ``return jax.jit(fn, ...)`` / ``return partial(jax.jit, ...)(fn)``: a line that can make a def a jit factory
#: is one that starts with ``[ \t]+return[ \t]`` and has the word ``jit`` (see _return_jit_lines)
_JIT_WORD_END = re.compile(r"jit\b")
_RETURN_START = re.compile(r"[ \t]+return[ \t]")


def _factory_keywords(index: ModuleIndex, func: DefNode, stmt: ast.stmt) -> dict[str, ast.expr] | None:
    """The jit keywords of a factory ``def f(fn, ...): return jax.jit(fn, ...)`` (or
    ``partial(jax.jit, ...)(fn)``), else None. A keyword given as a parameter of ``f`` with a
    literal default stands for that default."""
    if not isinstance(stmt, ast.Return) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    transform = call
    if isinstance(call.func, ast.Call) and last_name(call.func.func) == "partial" and call.func.args:
        transform = call.func  # partial(jax.jit, static_argnames=...)(fn)
        jit = transform.args[0]
    else:
        jit = call.func
    if nm.classify_transform(index.names.qualify(jit)) != "jit" or not call.args:
        return None
    first = call.args[0]
    if not (isinstance(first, ast.Name) and first.id in all_params(func)):
        return None
    defaults = dict(param_defaults(func))
    out: dict[str, ast.expr] = {}
    for keyword in transform.keywords:
        if keyword.arg in _STATIC_KEYWORDS:
            value = keyword.value
            if isinstance(value, ast.Name) and defaults.get(value.id) is not None:
                value = defaults[value.id]
            out[keyword.arg] = value
    return out


def find_jit_factories(index: ModuleIndex) -> dict[str, dict[str, ast.expr]]:
    """Jit factories this module can call: its own module-level ones and the imported ones
    (``index.imported_factories``): local name -> the static keywords of the jit they return.
    Computed once per module (kept on ``index``); callers must not change what it returns."""
    if index.jit_factories is None:
        index.jit_factories = _find_jit_factories(index)
    return index.jit_factories


def _find_jit_factories(index: ModuleIndex) -> dict[str, dict[str, ast.expr]]:
    out: dict[str, dict[str, ast.expr]] = {
        name: _literal_keywords(statics) for name, statics in index.imported_factories.items()
    }
    if "jit" not in index.parsed.text:
        return out
    for line in _return_jit_lines(index.parsed.text):
        chain = index.statement_chain(line)
        top = chain[0] if chain else None
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) and index.defs.get(top.name) is top:
            keywords = _factory_keywords(index, top, chain[-1])
            if keywords is not None:
                out[top.name] = keywords
    return out


def _return_jit_lines(text: str) -> Iterator[int]:
    """Lines matching ``^[ \t]+return[ \t]+.*\bjit\b``, found from the other end: a search for the
    literal ``jit`` (fast, and rare) and a look at the start of its line, instead of trying that
    pattern at the start of every indented line (6x faster on jax's source)."""
    last = 0
    for line, m in word_start_lines(_JIT_WORD_END, text):  # `jit` as a whole word
        if line == last:
            continue  # that line is done
        if _RETURN_START.match(text, text.rfind("\n", 0, m.start()) + 1):
            last = line
            yield line


def factory_statics(index: ModuleIndex) -> dict[str, FactoryStatics]:
    """This module's own jit factories whose static arguments are literals: name -> (argnums, argnames)."""
    out: dict[str, FactoryStatics] = {}
    for name, keywords in find_jit_factories(index).items():
        if name in index.imported_factories or not keywords:
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
    """Jit sites made by jit factories and static-keyword wrappers (see the module docstring)."""
    text = index.parsed.text
    if "static_arg" not in text and "jit" not in text and not index.imported_factories:
        return []
    factories = find_jit_factories(index)
    # _STATIC_RE is slow (``.*`` on every assignment line): scan with it only where it can match
    patterns = [_STATIC_RE.pattern] if "static_arg" in text else []
    if factories:
        patterns.append(r"\b(?:" + "|".join(map(re.escape, factories)) + r")\s*\(")
    seen = {id(site.node) for site in known}
    out: list[JitSite] = []
    lines = match_lines(re.compile("|".join(patterns), re.MULTILINE), text) if patterns else iter(())
    for line, _ in lines:
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
    out.extend(_decorated_sites(index, factories, seen))
    return out


def _decorated_sites(
    index: ModuleIndex, factories: dict[str, dict[str, ast.expr]], seen: set[int]
) -> list[JitSite]:
    """``@compiled`` on a module-level def, where ``compiled`` is a jit factory."""
    out: list[JitSite] = []
    if not factories:
        return out
    for func in index.defs.values():
        for dec in func.decorator_list:
            if isinstance(dec, ast.Name) and dec.id in factories and id(dec) not in seen:
                keywords = factories[dec.id]
                out.append(
                    JitSite(
                        dec,
                        "jit",
                        func,
                        False,
                        literal_ints(keywords.get("static_argnums")),
                        literal_strs(keywords.get("static_argnames")),
                        keywords,
                        None,
                        False,
                        False,
                        func.name,
                        [func],
                    )
                )
    return out
