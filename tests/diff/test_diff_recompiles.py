"""``jitscope diff``'s recompilation part: both sides' compile-cache keys, per call, and what the change
did to them (a parameter made static, a donation added); compiles per side over the call sequence."""

from __future__ import annotations

import json

from jitscope.comparison.keys import argument_changes, compare_keys
from jitscope.model.trace import ArgumentSummary, SeenArg, TraceRecord
from tests.conftest import run_cli
from tests.docs_excerpts import assert_shown
from tests.diff.conftest import Repo

EXAMPLES = """

JITSCOPE_EXAMPLES = {"step": [{"shapes": "f32[64,64]", "kwargs": {"n": 1}},
                              {"shapes": "f32[64,64]", "kwargs": {"n": 2}},
                              {"shapes": "f32[64,64]", "kwargs": {"n": 3}}]}
"""

TRACED_N = """
import jax
import jax.numpy as jnp


@jax.jit
def step(x, n):
    return jnp.tanh(x).sum() * n
""" + EXAMPLES

STATIC_N = """
import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames=("n",))
def step(x, n):
    return jnp.tanh(x).sum() * n
""" + EXAMPLES


def test_a_parameter_made_static_adds_a_recompile_per_value(repo: Repo) -> None:
    repo.write("model.py", TRACED_N)
    repo.commit("old")
    repo.write("model.py", STATIC_N)
    result = run_cli("diff", "model.py:step", "--base", "HEAD", "-f", "json", cwd=repo.root)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == "1.2"
    compiles = doc["compiles"]
    assert (compiles["calls"], compiles["old"], compiles["new"]) == (3, 1, 3)
    (change,) = compiles["arguments"]
    assert (change["argument"], change["old"], change["new"]) == ("n", "traced ~i32[]", "static (1)")
    assert "a recompile per distinct value of n" in change["effect"]
    first, second, third = (c["keys"] for c in doc["calls"])
    assert first["old_statics"] == [] and first["new_statics"] == ["n"]
    assert (second["old_hit_of"], second["new_hit_of"]) == (1, 0)
    assert any(d["component"] == "n (static): value" and (d["before"], d["after"]) == ("1", "2")
               for d in second["new_cause"])  # why call 2 compiles again on the new side
    assert third["new_hit_of"] == 0

    shown = run_cli("diff", "model.py:step", "--base", "HEAD", cwd=repo.root).stdout
    assert_shown(shown, "guides/diff.md", "recompilation: the 3 calls compared")  # the page shows this pair's output
    text = " ".join(shown.split())  # unwrapped
    assert "compile 1 time on the old side and 3 times on the new (+2 compiles)" in text
    assert "compile cache (recompilation)" in text
    assert "new side: this call compiles: n (static): value 1 -> 2" in text


def test_the_same_keys_leave_the_document_as_it_was(repo: Repo) -> None:
    repo.write("model.py", STATIC_N)
    repo.commit("old")
    repo.write("model.py", STATIC_N.replace("jnp.tanh(x)", "jnp.tanh(x * 1.0)"))
    doc = json.loads(run_cli("diff", "model.py:step", "--base", "HEAD", "-f", "json", cwd=repo.root).stdout)
    assert doc["schema_version"] == "1.1" and "compiles" not in doc
    assert all("keys" not in c for c in doc["calls"])


def _record(seen: tuple[SeenArg, ...], donate: tuple[int, ...] = (), hit: int | None = None) -> TraceRecord:
    names = tuple(dict.fromkeys(s.path.split("[")[0] for s in seen))
    return TraceRecord(target="m.py:f", how="", call="f32[8]", seen=seen, donate_argnums=donate, cache_hit_of=hit,
                       arguments=tuple(ArgumentSummary(n, "ArraySpec", "") for n in names))


def test_a_donation_added_is_named_with_its_effect() -> None:
    seen = (SeenArg("x", "traced", "Tracer", (8,), "f32"), SeenArg("y", "traced", "Tracer", (8,), "f32"))
    old, new = _record(seen), _record(seen, donate=(0,))
    (change,) = argument_changes(old, new)
    assert (change.argument, change.old, change.new) == ("x", "traced f32[8]", "traced f32[8], donated")
    assert change.effect.startswith("donated now")
    keys = compare_keys(old, new, [old], [new])
    assert keys is not None and [str(d) for d in keys.diffs] == ["x: donated (absent) -> yes"]
    assert keys.new_donated == ("x",) and keys.old_donated == ()


def test_a_static_parameter_made_traced_serves_every_value() -> None:
    old = _record((SeenArg("n", "static", "int", value_repr="3"),))
    new = _record((SeenArg("n", "traced", "Tracer", (), "i32", weak_type=True),))
    (change,) = argument_changes(old, new)
    assert change.effect.startswith("one compile serves every value of n")
    assert compare_keys(old, old, [old], [old]) is None  # nothing differs: no record
