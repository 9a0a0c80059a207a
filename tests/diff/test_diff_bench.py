"""``jitscope diff --bench``: both sides' cached calls timed alternately, a verdict only beyond the noise."""

from __future__ import annotations

import json
from pathlib import Path

from jitscope.comparison.timing import judge
from jitscope.model.diff import BenchSide
from tests.conftest import run_cli


def _side(*cached: float) -> BenchSide:
    return BenchSide(cached=cached, cold=tuple(1.0 for _ in cached))


def test_a_verdict_needs_every_round_to_agree_and_a_change_beyond_the_spread() -> None:
    slower = judge("f32[8]", _side(1.0, 1.02, 0.99), _side(1.5, 1.52, 1.49))
    assert slower.verdict == "slower" and round(slower.ratio, 2) == 1.5 and slower.rounds == 3
    assert judge("f32[8]", _side(1.0, 1.0, 1.0), _side(0.5, 0.51, 0.5)).verdict == "faster"
    # one round the other way: the machine, not the change
    assert judge("f32[8]", _side(1.0, 1.0, 1.0), _side(1.3, 0.9, 1.3)).verdict == "same"
    # every round a little slower, but each side's own rounds spread wider than the change
    noisy = judge("f32[8]", _side(1.0, 1.4, 1.0), _side(1.05, 1.45, 1.05))
    assert noisy.verdict == "same" and noisy.noise > abs(noisy.change)


OLD = "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return x + 1\n"
NEW = ("import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n"
       "    for _ in range(40):\n        x = jnp.tanh(x @ x)\n    return x + 1\n")


def test_bench_times_both_sides_and_the_gate_reads_it(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text(OLD)
    (tmp_path / "new.py").write_text(NEW)
    proc = run_cli("diff", "old.py:f", "new.py:f", "-s", "f32[256,256]", "--bench", "--bench-rounds", "2",
                   "--bench-budget", "0.05", "--format", "json", "--fail-on", "runtime>+50%", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # 40 matmuls against one add: far beyond +50%
    (call,) = json.loads(proc.stdout)["calls"]
    bench = call["bench"]
    assert len(bench["old"]["cached"]) == len(bench["new"]["cached"]) == 2
    assert bench["verdict"] == "slower" and bench["change"] > 0.5
    assert "runtime +" in proc.stderr and "over the +50% limit" in proc.stderr


def test_bench_rounds_must_be_at_least_two(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text(OLD)
    proc = run_cli("diff", "old.py:f", "old.py:f", "-s", "f32[4]", "--bench", "--bench-rounds", "1", cwd=tmp_path)
    assert proc.returncode == 2 and "--bench-rounds" in proc.stderr
