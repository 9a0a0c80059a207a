"""``jitscope diff`` on pairs of versions of one module, committed and edited in a scratch git repository.

Each test commits the old version, writes the new one into the working tree and compares them with
``--base HEAD`` (the JSON document, and the one-line errors). Timings are never asserted.
"""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import run_cli
from tests.diff.conftest import Repo, line_of

MLP = """
import jax
import jax.numpy as jnp


@jax.jit
def step(x, w):
    h = jnp.tanh(x @ w)
    return h.sum()


JITSCOPE_EXAMPLES = {"step": "f32[8,16], f32[16,16]"}
"""

MLP_EXTRA_MATMUL = """
import jax
import jax.numpy as jnp


@jax.jit
def step(x, w):
    h = jnp.tanh(x @ w)
    h = h @ w
    return h.sum()


JITSCOPE_EXAMPLES = {"step": "f32[8,16], f32[16,16]"}
"""

MLP_RENAMED = """
import jax
import jax.numpy as jnp


@jax.jit
def step(inputs, weights):
    hidden = jnp.tanh(inputs @ weights)  # renamed, and a comment
    return hidden.sum()


JITSCOPE_EXAMPLES = {"step": "f32[8,16], f32[16,16]"}
"""

TWO_LINES = """
import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    a = jnp.sin(x)
    b = jnp.cos(x) * 2.0
    return a + b


JITSCOPE_EXAMPLES = {"step": "f32[32]"}
"""

TWO_LINES_SWAPPED = """
import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    b = jnp.cos(x) * 2.0
    a = jnp.sin(x)
    return a + b


JITSCOPE_EXAMPLES = {"step": "f32[32]"}
"""

BF16 = """
import jax
import jax.numpy as jnp

DTYPE = "f32"


@jax.jit
def step(x, w):
    return jnp.tanh(x @ w)


JITSCOPE_EXAMPLES = {"step": f"{DTYPE}[64,64], {DTYPE}[64,64]"}
"""

SCAN = """
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def step(w, x):
    def layer(h, w_i):
        h = jnp.tanh(h @ w_i)
        return h, None

    h, _ = jax.lax.scan(layer, x, w)
    return h
"""

SCAN_GATHERED = """
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def step(w, x):
    def layer(h, w_i):
        h = jnp.tanh(h @ w_i)
        h = jax.lax.with_sharding_constraint(h, P())
        return h, None

    h, _ = jax.lax.scan(layer, x, w)
    return h
"""


def diff_json(repo: Repo, *args: str) -> dict[str, Any]:
    result = run_cli("diff", "model.py:step", "--base", "HEAD", "-f", "json", *args, cwd=repo.root)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def versions(repo: Repo, old: str, new: str) -> None:
    repo.write("model.py", old)
    repo.commit("old")
    repo.write("model.py", new)


def metric(call: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in call["metrics"] if m["name"] == name)


def test_an_added_matmul_is_reported_at_its_line(repo: Repo) -> None:
    versions(repo, MLP, MLP_EXTRA_MATMUL)
    doc = diff_json(repo)
    assert doc["kind"] == "jitscope.diff" and doc["schema_version"] == "1.1"
    (call,) = doc["calls"]
    line = line_of(MLP_EXTRA_MATMUL, "h = h @ w")
    (change,) = call["changes"]
    assert (change["kind"], change["new_file"], change["new_line"]) == ("added", "model.py", line)
    assert change["new_source"] == "h = h @ w"
    assert any(e.startswith("dot_general f32[8,16], f32[16,16] -> f32[8,16]") for e in change["added_eqns"])
    assert call["primitives"] == [{"name": "dot_general", "old": 1, "new": 2}]
    # XLA also regroups the tanh and the sum around the new dot: those fusions change too, at their own lines.
    dots = [h for h in call["hlo"] if "dot" in (h["fused"] or h["opcode"])]
    assert [(h["kind"], h["line"], h["shape"]) for h in dots] == [("added", line, "f32[8,16]")]
    flops = metric(call, "flops")
    assert flops["new"] > flops["old"]
    assert call["old"]["label"].startswith("HEAD (") and call["new"]["label"] == "working tree"
    assert not repo.git("worktree", "list").count("\n") > 1  # the temporary worktree is gone
    assert repo.git("status", "--porcelain") == " M model.py\n"  # the user's tree untouched


def test_a_renamed_variable_is_no_change(repo: Repo) -> None:
    versions(repo, MLP, MLP_RENAMED)
    result = run_cli("diff", "model.py:step", "--base", "HEAD", cwd=repo.root)
    assert result.returncode == 0, result.stderr
    assert "no change to the compiled program (2 lines edited without changing it)" in result.stdout
    doc = diff_json(repo)
    (call,) = doc["calls"]
    assert call["changes"] == [] and call["primitives"] == [] and call["hlo"] == [] and call["collectives"] == []
    assert call["edited_same"] == 2
    assert all(m["old"] == m["new"] for m in call["metrics"] if not m["noisy"])


def test_a_moved_line_is_one_move(repo: Repo) -> None:
    versions(repo, TWO_LINES, TWO_LINES_SWAPPED)
    (call,) = diff_json(repo)["calls"]
    (change,) = call["changes"]
    assert change["kind"] == "moved"  # swapped lines: one of them moved past the other, its equations the same
    code = change["new_source"]
    assert code in ("a = jnp.sin(x)", "b = jnp.cos(x) * 2.0") and change["old_source"] == code
    assert (change["old_line"], change["new_line"]) == (line_of(TWO_LINES, code), line_of(TWO_LINES_SWAPPED, code))
    assert change["old_line"] != change["new_line"]
    assert call["primitives"] == [] and call["hlo"] == []


def test_f32_to_bf16_halves_the_bytes(repo: Repo) -> None:
    versions(repo, BF16, BF16.replace('DTYPE = "f32"', 'DTYPE = "bf16"'))
    (call,) = diff_json(repo)["calls"]
    for name in ("arguments", "outputs"):
        assert metric(call, name)["new"] * 2 == metric(call, name)["old"], name
    # (bytes accessed need not halve: XLA's CPU compiler converts bf16 to f32 around a dot and back)
    assert any(h["kind"] == "added" and h["shape"].startswith("bf16") for h in call["hlo"])
    line = line_of(BF16, "return jnp.tanh")
    (change,) = call["changes"]
    assert (change["kind"], change["old_line"], change["new_line"]) == ("changed", line, line)
    assert "dot_general bf16[64,64], bf16[64,64] -> bf16[64,64]" in change["added_eqns"]
    assert "dot_general f32[64,64], f32[64,64] -> f32[64,64]" in change["removed_eqns"]


def test_an_all_gather_added_in_a_scan_body_on_8_devices(repo: Repo) -> None:
    versions(repo, SCAN, SCAN_GATHERED)
    args = ("--devices", "8", "--mesh", "data=8", "-s", "f32[3,64,64]@(), f32[16,64]@(data,None)")
    doc = diff_json(repo, *args)
    (call,) = doc["calls"]
    added = [c for c in call["collectives"] if c["kind"] == "added"]
    # on the line that gathers, or (as the partitioner names it on some JAX versions) the one whose result it gathers
    body = {line_of(SCAN_GATHERED, "with_sharding_constraint"), line_of(SCAN_GATHERED, "h = jnp.tanh")}
    assert [(c["collective"], c["in_loop"]) for c in added] == [("all-gather", True)] and added[0]["line"] in body
    assert added[0]["send_bytes"] > 0
    assert call["old"]["environment"]["device_count"] == 8
    gate = run_cli("diff", "model.py:step", "--base", "HEAD", *args, "--fail-on", "new-collective,flops>+1000%",
                   cwd=repo.root)
    assert gate.returncode == 1, gate.stderr
    errors = [line for line in gate.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "new-collective: all-gather" in errors[0] and "inside a loop body" in errors[0]
    assert "CI gates" in gate.stdout


def test_bad_input_is_one_line(repo: Repo, tmp_path: Any) -> None:
    repo.write("model.py", MLP)
    repo.commit()

    def one_error(result: Any, code: int) -> str:
        assert result.returncode == code, (result.stdout, result.stderr)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
        return errors[0]

    assert "no such revision" in one_error(run_cli("diff", "model.py:step", "--base", "nope", cwd=repo.root), 2)
    repo.write("new.py", MLP)  # only in the working tree
    missing = one_error(run_cli("diff", "new.py:step", "--base", "HEAD", cwd=repo.root), 2)
    assert missing.startswith("error: base HEAD") and "file not found: new.py" in missing
    repo.write("model.py", MLP.replace("h = jnp.tanh(x @ w)", "h = jnp.tanh(x @ w) if x.sum() > 0 else x"))
    failed = run_cli("diff", "model.py:step", "--base", "HEAD", cwd=repo.root)
    line = one_error(failed, 1)
    assert line.startswith("error: working tree: ") and "failed while tracing" in line
    assert "failed on the working tree side" in failed.stdout
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "model.py").write_text(MLP)
    no_repo = one_error(run_cli("diff", "model.py:step", "--base", "HEAD", cwd=alone,
                                env={"GIT_CEILING_DIRECTORIES": str(tmp_path)}), 2)
    assert "not in one" in no_repo
