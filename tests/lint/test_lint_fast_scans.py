"""The linter's fast scans find exactly what the plain ones they replaced found.

Each speed-up of ``jitscope lint`` (issue 21) kept every finding; these pin the equivalences the
faster code relies on, on inputs chosen to break them (words inside longer words, non-ASCII
identifiers, several hits on a line), so a later change to one side shows up here.
"""

from __future__ import annotations

import ast
import re

import pytest

from jitscope.linter.analysis import discovery, jit_factories
from jitscope.linter.analysis.module_analysis import analyze_module
from jitscope.linter.analysis.module_index import ModuleIndex
from jitscope.linter.analysis.source import ParsedSource, match_lines, parse_source, word_start_lines
from jitscope.linter.context import ModuleContext
from jitscope.linter.rules.js105_mutable_global_read import mutable_globals

TEXTS = [
    "xjit(jit)\nvmapx = vmap\n",
    "éjit jit\n_map map(f, x)\nremap(map(x))\n",
    "a.jit(b); c = jit\nsecond = cond\n",
    "def f(g):\n    return jax.jit(g)\n",
    "  return  jit\n\treturn\tjitter jit_x jit\n return jit",
    "  returnjit\n  return xjit\n  return éjit\n   # return jit\n  return (jit)\njit\n  return 1\n",
    "myjit = 1\nxmyjit(myjit)\né_scan(1) + mapé\n",
]


def _lines(pattern: re.Pattern[str], text: str) -> list[int]:
    return [line for line, _ in match_lines(pattern, text)]


@pytest.mark.parametrize("extra", [[], ["myjit", "é_scan", "mapé"]])
@pytest.mark.parametrize("text", TEXTS)
def test_trigger_scan_matches_the_word_bounded_regex(text: str, extra: list[str]) -> None:
    words = [*discovery._TRIGGER_WORDS, *extra]
    bounded = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")\b")
    found = [line for line, _ in word_start_lines(discovery.word_regex(words), text)]
    assert found == _lines(bounded, text)


SOURCE = '''
import jax

CACHE = {}
ITEMS = []
COUNT = 0
LONG_NAME = []
é = []


def record(v):
    global COUNT
    COUNT += 1
    CACHE[v] = v
    ITEMS.append(v)
    LONG_NAME_2 = []
    LONG_NAME_2.append(v)
    é.append(v)


@jax.jit
def f(x):
    return x * len(CACHE) + len(ITEMS) + COUNT + len(LONG_NAME) + len(é)


def g():
    def inner():
        a = jax.tree_util.tree_structure(1)
        leaves, tree = jax.tree_util.tree_flatten(2)
        return a, leaves, tree
    if True:
        b = jax.tree.structure(3)
    return inner, b
'''


def _parsed(source: str) -> ParsedSource:
    parsed = parse_source("m.py", source.encode())
    assert isinstance(parsed, ParsedSource)
    return parsed


def _context(source: str) -> ModuleContext:
    return ModuleContext(analyze_module(ModuleIndex(_parsed(source), "m")))


def test_mutable_globals_for_some_names_agrees_with_all_of_them() -> None:
    """About the names asked for, the answer is the same (others may come along: `global` lines)."""
    ctx = _context(SOURCE)
    everything = mutable_globals(ctx)
    assert everything >= {"CACHE", "ITEMS", "COUNT"}
    for names in ({"CACHE"}, {"ITEMS", "LONG_NAME"}, {"é", "COUNT"}, set(ctx.module_values), set()):
        assert mutable_globals(ctx, names) & names == everything & names


def test_call_assignments_are_those_ast_walk_finds() -> None:
    index = ModuleIndex(_parsed(SOURCE), "m")
    for func in index.defs.values():
        walked = [
            (node.targets[0], node.value)
            for node in ast.walk(ast.Module(body=func.body, type_ignores=[]))
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)
        ]
        found = index.call_assignments(func)
        assert sorted(map(id, (t for t, _ in found))) == sorted(map(id, (t for t, _ in walked)))
    assert len(index.call_assignments(index.defs["g"])) == 3
