"""``jitscope diff --memory``: the exact peak of both sides and the bytes live there by line, old vs new.

Pairs of versions are committed and edited in a scratch git repository (``--base HEAD``); sizes come
from XLA's buffer assignment on the CPU, so they are exact. Timings are never asserted.
"""

from __future__ import annotations

import json
from typing import Any

import jax
import pytest

from jitscope.comparison.memory import LineMap, align, compare_rows
from jitscope.comparison.sources import SourceTree
from jitscope.model.common import Location, from_jsonable, to_jsonable
from jitscope.model.diff import DiffReport
from jitscope.model.memory import LineMemory, MemoryRow, Peak, Totals
from tests.conftest import run_cli
from tests.diff.conftest import Repo, line_of
from tests.docs_excerpts import assert_shown

SMALL = """
import jax
import jax.numpy as jnp


@jax.jit
def step(x, w):
    h = jnp.tanh(x @ w)
    return (h @ w).sum()


JITSCOPE_EXAMPLES = {"step": "f32[256,256], f32[256,256]"}
"""

# The sort keeps its input and output in memory (XLA does not fuse it away): 2 MiB at that line.
LARGE = """
import jax
import jax.numpy as jnp


@jax.jit
def step(x, w):
    h = jnp.tanh(x @ w)
    big = jnp.sort(jnp.tile(h, (8, 1)), axis=0)
    return (big @ w).sum()


JITSCOPE_EXAMPLES = {"step": "f32[256,256], f32[256,256]"}
"""

RENAMED = """
import jax
import jax.numpy as jnp


@jax.jit
def step(inputs, weights):
    hidden = jnp.tanh(inputs @ weights)  # renamed
    return (hidden @ weights).sum()


JITSCOPE_EXAMPLES = {"step": "f32[256,256], f32[256,256]"}
"""


def versions(repo: Repo, old: str, new: str) -> None:
    repo.write("model.py", old)
    repo.commit("old")
    repo.write("model.py", new)


def diff_json(repo: Repo, *args: str, code: int = 0) -> dict[str, Any]:
    result = run_cli("diff", "model.py:step", "--base", "HEAD", "--memory", "-f", "json", *args, cwd=repo.root)
    assert result.returncode == code, result.stderr
    return dict(json.loads(result.stdout))


def test_a_large_intermediate_shows_at_its_line_and_the_gate_reads_the_exact_peak(repo: Repo) -> None:
    versions(repo, SMALL, LARGE)
    doc = diff_json(repo, "--fail-on", "peak>+5%", code=1)
    assert doc["schema_version"] == "1.2"
    (call,) = doc["calls"]
    memory = call["memory"]
    assert memory["new_peak"] - memory["old_peak"] >= 2 * 2**20
    line = line_of(LARGE, "big = jnp.sort")
    top = memory["lines"][0]  # largest change first
    assert (top["new_file"], top["new_line"]) == ("model.py", line)  # its old side: what the lines table pairs it with
    assert top["new_bytes"] >= 2 * 2**20 > 1024 > top["old_bytes"] and top["source"].startswith("big = jnp.sort")
    peak = next(m for m in call["metrics"] if m["name"] == "peak")
    assert peak["label"] == "peak memory (buffer assignment)"
    assert (peak["old"], peak["new"]) == (memory["old_peak"], memory["new_peak"])
    (gate,) = doc["gates"]
    assert gate["crossed"] and "peak memory (buffer assignment)" in gate["message"]
    assert from_jsonable(DiffReport, doc) == from_jsonable(DiffReport, to_jsonable(from_jsonable(DiffReport, doc)))

    text = run_cli("diff", "model.py:step", "--base", "HEAD", "--memory", "--fail-on", "peak>+5%", cwd=repo.root)
    assert text.returncode == 1
    assert "memory at the peak, by line (--memory)" in text.stdout
    assert f"model.py:{line}" in text.stdout
    crossed = [x for x in text.stderr.splitlines() if x.startswith("error: ")]
    assert len(crossed) == 1 and "peak memory (buffer assignment)" in crossed[0]
    if tuple(int(part) for part in jax.__version__.split(".")[:2]) >= (0, 5):
        # the page shows this pair's report and gate line, as the docs' JAX prints them; JAX 0.4.38's XLA assigns
        # the buffers differently (other rows, other ops making them)
        assert_shown(text.stdout + text.stderr, "guides/diff.md", "$ jitscope diff model.py:step --base HEAD --memory")


def test_a_renamed_variable_changes_no_memory_line(repo: Repo) -> None:
    versions(repo, SMALL, RENAMED)
    (call,) = diff_json(repo)["calls"]
    memory = call["memory"]
    assert memory["lines"] == [] and memory["same"] >= 1
    assert memory["old_peak"] == memory["new_peak"]
    assert call["changes"] == []


def test_without_memory_the_peak_says_it_is_memory_analysis_bound(repo: Repo) -> None:
    versions(repo, SMALL, LARGE)
    result = run_cli("diff", "model.py:step", "--base", "HEAD", "-f", "json", "--fail-on", "peak>+5%", cwd=repo.root)
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == "1.1" and "memory" not in doc["calls"][0]  # nothing new in the document
    peak = next(m for m in doc["calls"][0]["metrics"] if m["name"] == "peak")
    assert peak["label"] == "peak memory (args + outputs + temps)"


def test_memory_with_a_revision_that_does_not_exist_is_one_line(repo: Repo) -> None:
    versions(repo, SMALL, LARGE)
    result = run_cli("diff", "model.py:step", "--base", "nope", "--memory", cwd=repo.root)
    assert result.returncode == 2
    assert result.stderr.startswith("error: --base nope: no such revision")
    assert "Traceback" not in result.stderr


# -- alignment, on records (no JAX) ---------------------------------------------------------------------


def _row(file: str, lines: dict[int, int], peak: int, residual: dict[int, int] | None = None) -> MemoryRow:
    rows = tuple(LineMemory(Location(file, n), b, 0.0, 1, (residual or {}).get(n, 0), ("mul",))
                 for n, b in lines.items())
    return MemoryRow(target="m.py:f", call="f32[8]", function=Location(file, 1), last_line=20, module="jit_f",
                     backend="cpu", devices=1, totals=Totals(0, 0, 0, 0, 0, 0, peak),
                     peak=Peak(peak, 0, 1, "x", None, (), peak, 0, 0, 0), lines=rows)


def test_lines_are_aligned_by_the_jaxpr_pairing_then_by_text() -> None:
    old_src = SourceTree("/old", {"m.py": ("def f(x):", "  a = x * 2", "  b = y + 1", "  return b")})
    new_src = SourceTree("/new", {"m.py": ("def f(x):", "  y = x * 2", "  z = y * y", "  b = y + 1", "  return b")})
    line_map = LineMap.build([(("m.py", 2), ("m.py", 2))], [])  # renamed: the jaxpr pairs 2 with 2
    line_map.new_lines.add(("m.py", 3))
    pairs = align([("m.py", 2), ("m.py", 3)], [("m.py", 2), ("m.py", 3), ("m.py", 4)], line_map, old_src, new_src)
    assert (("m.py", 2), ("m.py", 2)) in pairs
    assert (("m.py", 3), ("m.py", 4)) in pairs  # same text, shifted by the new line
    assert (None, ("m.py", 3)) in pairs

    old = _row("/old/m.py", {2: 32, 3: 32}, 100, residual={2: 32})
    new = _row("/new/m.py", {2: 32, 3: 64, 4: 32}, 164, residual={2: 32})
    cmp = compare_rows(old, new, line_map, old_src, new_src)
    assert cmp.same == 2 and [(r.new_line, r.change) for r in cmp.lines] == [(3, 64)]
    assert (cmp.old_peak, cmp.new_peak) == (100, 164) and cmp.change == pytest.approx(0.64)
    assert cmp.old_residual == 0 and cmp.new_residual == 0  # no residual buffer live at either peak


def test_a_side_whose_jax_does_not_mark_the_backward_pass_says_so() -> None:
    from dataclasses import replace

    from jitscope.buffers.advice import UNMARKED

    src = SourceTree("/s", {"m.py": ("def f(x):", "  return x * 2")})
    old = replace(_row("/s/m.py", {2: 8}, 8), warnings=(UNMARKED,))
    new = _row("/s/m.py", {2: 8}, 8)
    cmp = compare_rows(old, new, LineMap.build([(("m.py", 2), ("m.py", 2))], []), src, src)
    assert cmp.old_residual is None and cmp.new_residual == 0
    assert any("old side" in n and "residuals are not shown" in n for n in cmp.notes)
