"""The pure parts of ``jitscope diff``: line alignment, gates, JSON, the views, and the Python API."""

from __future__ import annotations

import json

import pytest

from jitscope.comparison.gate import check, parse_rules
from jitscope.comparison.jaxpr import FlatEqn, LineGroup, diff_lines
from jitscope.errors import UsageError
from jitscope.model.common import from_jsonable
from jitscope.model.diff import CallDiff, CollectiveChange, DiffReport, Metric, SideInfo


def group(line: int, *sigs: str, context: str = "") -> LineGroup:
    g = LineGroup("m.py", line, context)
    g.eqns = [FlatEqn(s, s.split()[0], "m.py", line, context, ()) for s in sigs]
    return g


def no_source(file: str, line: int) -> str:
    return ""


def test_lines_align_by_what_they_compute() -> None:
    old = [group(1, "sin f32[4] -> f32[4]"), group(2, "cos f32[4] -> f32[4]"), group(3, "add f32[4] -> f32[4]")]
    # a line inserted at the top shifts every other line: only the insertion is a change
    new = [group(1, "exp f32[4] -> f32[4]"), *(group(g.line + 1, *(e.signature for e in g.eqns)) for g in old)]
    found = diff_lines(old, new, no_source, no_source)
    assert [(c.kind, c.new_line) for c in found.changes] == [("added", 1)]
    assert found.unchanged == 3
    # the same equations elsewhere: a move, not a removal and an addition
    moved = [old[1], old[2], group(4, "sin f32[4] -> f32[4]")]
    assert [(c.kind, c.old_line, c.new_line) for c in diff_lines(old, moved, no_source, no_source).changes] == [
        ("moved", 1, 4)]
    # the same line computing something else: changed, with the equations on each side
    typed = [old[0], group(2, "cos bf16[4] -> bf16[4]"), old[2]]
    (change,) = diff_lines(old, typed, no_source, no_source).changes
    assert (change.kind, change.removed_eqns, change.added_eqns) == (
        "changed", ("cos f32[4] -> f32[4]",), ("cos bf16[4] -> bf16[4]",))


def test_an_edited_line_is_paired_with_what_it_became_not_with_its_old_number() -> None:
    from jitscope.comparison.sources import LineCounterparts, SourceTree

    old_text = ("import jax.numpy as jnp", "", "def f(x):", "    a = jnp.sin(x)", "    b = jnp.cos(a)",
                "    return a + b")
    new_text = ("import jax.numpy as jnp", "", "def f(x):", "    a = jnp.sin(x)", "    c = jnp.exp(a)",
                "    b = jnp.tanh(a)", "    return a + b + c")
    old_tree, new_tree = SourceTree("", {"m.py": old_text}), SourceTree("", {"m.py": new_text})
    counterparts = LineCounterparts(old_tree, new_tree)
    assert [counterparts("m.py", n, "m.py") for n in (3, 4, 5, 6)] == [3, 4, 6, 7]
    old = [group(4, "sin f32[4] -> f32[4]"), group(5, "cos f32[4] -> f32[4]"), group(6, "add f32[4] -> f32[4]")]
    new = [group(4, "sin f32[4] -> f32[4]"), group(5, "exp f32[4] -> f32[4]"), group(6, "tanh f32[4] -> f32[4]"),
           group(7, "add f32[4] -> f32[4]", "add f32[4] -> f32[4]")]
    found = diff_lines(old, new, old_tree.line, new_tree.line, counterparts)
    assert [(c.kind, c.old_line, c.new_line) for c in found.changes] == [
        ("added", 0, 5), ("changed", 5, 6), ("changed", 6, 7)]
    # by line number alone, `b = jnp.cos(a)` (line 5) was paired with the new line 5, `c = jnp.exp(a)`
    by_number = diff_lines(old, new, old_tree.line, new_tree.line)
    assert ("changed", 5, 5) in [(c.kind, c.old_line, c.new_line) for c in by_number.changes]


def test_a_renamed_line_is_counted_as_edited_not_changed() -> None:
    old, new = [group(1, "sin f32[4] -> f32[4]")], [group(1, "sin f32[4] -> f32[4]")]
    found = diff_lines(old, new, lambda f, n: "a = jnp.sin(x)", lambda f, n: "b = jnp.sin(x)")
    assert found.changes == () and found.edited_same == 1


def _call(**metrics: tuple[float, float]) -> CallDiff:
    return CallDiff("f", "f32[8]", SideInfo("old", "m.py:f"), SideInfo("new", "m.py:f"),
                    metrics=tuple(Metric(n.replace("_", "-"), n, a, b, "bytes" if n == "peak" else "count")
                                  for n, (a, b) in metrics.items()))


def test_fail_on_rules() -> None:
    rules = parse_rules("flops>+10%, peak>+1MiB ,new-collective,compile-time>+20%")
    assert [(r.metric, r.limit, r.relative) for r in rules] == [
        ("flops", 0.1, True), ("peak", 2.0**20, False), ("new-collective", 0.0, False), ("compile-time", 0.2, True)]
    call = _call(flops=(100.0, 125.0), peak=(2.0**20, 2.0**22), compile_time=(1.0, 1.1))
    results = check(rules, (call,))
    crossed = [g for g in results if g.crossed]
    assert [g.rule for g in crossed] == ["flops>+10%", "peak>+1MiB"]
    assert crossed[0].message == "f(f32[8]): flops +25.0% (100 -> 125), over the +10% limit"
    assert crossed[1].message == "f(f32[8]): peak +300.0% (1 MiB -> 4 MiB), over the +1 MiB limit"
    gathered = CallDiff("f", "x", SideInfo("o", "t"), SideInfo("n", "t"), collectives=(
        CollectiveChange("added", "all-gather", "f32", (16, 64), 3584, 3584, True, "m.py", 9),))
    (gate,) = check(parse_rules("new-collective-in-loop"), (gathered,))
    assert gate.crossed and gate.message == ("f(x): new-collective-in-loop: all-gather f32[16, 64] inside a loop body "
                                             "at m.py:9 added")
    for bad, words in (("flops>>1", "cannot read"), ("speed>+1%", "unknown metric"), ("", "names no threshold"),
                       ("peak>+3parsecs", "cannot read")):
        with pytest.raises(UsageError, match=words):
            parse_rules(bad)


def test_a_diff_report_round_trips_through_json() -> None:
    from jitscope.report.writers.json import dumps

    report = DiffReport("HEAD", "working tree", (_call(flops=(1.0, 2.0)),))
    data = json.loads(dumps(report))
    assert data["kind"] == "jitscope.diff" and data["schema_version"] == "1.1"
    assert from_jsonable(DiffReport, data) == report


def test_python_api_diff_and_its_renderings(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import jax
    import jax.numpy as jnp

    from jitscope.api.commands.diff import DiffResult, diff

    def before(x, w):  # type: ignore[no-untyped-def]
        return jnp.tanh(x @ w).sum()

    def after(x, w):  # type: ignore[no-untyped-def]
        h = jnp.tanh(x @ w)
        h = h @ w
        return h.sum()

    x, w = jax.ShapeDtypeStruct((8, 16), jnp.float32), jax.ShapeDtypeStruct((16, 16), jnp.float32)
    result = diff(before, after, x, w, fail_on="flops>+10%")
    assert isinstance(result, DiffResult) and result.changed
    (call,) = result.calls
    assert call.primitives[0].name == "dot_general" and (call.primitives[0].old, call.primitives[0].new) == (1, 2)
    assert [g.rule for g in result.crossed] == ["flops>+10%"]
    text = result.render("text")
    assert "program changed" in text and "h = h @ w" in text
    markdown = result.render("markdown")
    assert "| added |" in markdown and "h = h @ w" in markdown
    page = result.render("html")
    assert page.startswith("<!DOCTYPE html>") and "optimised HLO, old and new" in page
    assert json.loads(result.to_json())["kind"] == "jitscope.diff"
    same = diff(before, before, x, w)
    assert not same.changed and "no change to the compiled program" in same.render("text")
    assert result.save(tmp_path / "d.md").read_text() == markdown


def test_jaxpr_shapes_are_spelled_as_hlo_spells_them() -> None:
    """A float8 equation's shape never matched its HLO instruction's (f8_e4m3fn against f8e4m3fn)."""
    from jitscope.comparison.hlo import _hlo_shape

    assert _hlo_shape("f8_e4m3fn[8,4]") == "f8e4m3fn[8,4]" and _hlo_shape("f4_e2m1fn[2]") == "f4e2m1fn[2]"
    assert _hlo_shape("i4[8]") == "s4[8]" and _hlo_shape("bf16[2]") == "bf16[2]"
