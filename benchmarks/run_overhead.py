"""What ``jitscope run`` adds to a training loop: the same program under ``python`` and under
``jitscope run``, side by side in one run (rounds alternate which goes first).

The program trains a small MLP for ``--steps`` cached steps (one compile, then the C++
fast path) and prints how long its step loop took. Two ratios per round, jitscope/python:

* loop: the cached steps alone. jitscope hooks only JAX's cache-miss path, so this should
  be 1.00 within noise (the target is <= 1.05);
* process: the whole process, start to exit, including jitscope's own start-up (typer,
  rich, the summary) and the one compile it observes.

    python benchmarks/run_overhead.py [--steps 3000] [--rounds 5] [--quick]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import spread, watch_machine

PROGRAM = '''
import sys, time
import jax, jax.numpy as jnp

@jax.jit
def step(params, x, y):
    def loss(p):
        h = jnp.tanh(x @ p[0])
        return jnp.mean((h @ p[1] - y) ** 2)
    grads = jax.grad(loss)(params)
    return [p - 0.01 * g for p, g in zip(params, grads)]

key = jax.random.PRNGKey(0)
params = [jax.random.normal(key, (32, 64)) * 0.1, jax.random.normal(key, (64, 1)) * 0.1]
x, y = jnp.ones((16, 32)), jnp.ones((16, 1))
params = step(params, x, y)
jax.block_until_ready(params)
start = time.perf_counter()
for _ in range(int(sys.argv[1])):
    params = step(params, x, y)
jax.block_until_ready(params)
print(f"LOOP {time.perf_counter() - start:.6f}")
'''


def run_once(command: list[str]) -> tuple[float, float]:
    """(whole-process wall seconds, loop seconds the program reported)."""
    env = {**os.environ, "NO_COLOR": "1"}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    wall = time.perf_counter() - start
    loop = next(float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("LOOP "))
    return wall, loop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="500 steps, 2 rounds")
    opts = parser.parse_args()
    steps, rounds = (500, 2) if opts.quick else (opts.steps, opts.rounds)
    with tempfile.TemporaryDirectory() as tmp, watch_machine(uses_jax=True):
        script = Path(tmp) / "train.py"
        script.write_text(PROGRAM)
        plain = [sys.executable, str(script), str(steps)]
        observed = [sys.executable, "-m", "jitscope", "run", "--log", "none", str(script), str(steps)]
        loop_ratios, wall_ratios = [], []
        print(f"{steps} cached steps per run, {rounds} rounds (python and jitscope run alternate)")
        for index in range(rounds):
            pair = [("python", plain), ("jitscope", observed)]
            results = {name: run_once(cmd) for name, cmd in (pair if index % 2 == 0 else pair[::-1])}
            (p_wall, p_loop), (j_wall, j_loop) = results["python"], results["jitscope"]
            loop_ratios.append(j_loop / p_loop)
            wall_ratios.append(j_wall / p_wall)
            print(f"round {index + 1}: loop python {p_loop * 1e3:.0f} ms, jitscope run {j_loop * 1e3:.0f} ms "
                  f"({j_loop / p_loop:.3f}x); process {p_wall:.2f} s vs {j_wall:.2f} s ({j_wall / p_wall:.3f}x)")
        print(f"\ncached-step loop, jitscope run / python: {spread(loop_ratios, 'rounds')}")
        print(f"whole process,     jitscope run / python: {spread(wall_ratios, 'rounds')}")


if __name__ == "__main__":
    main()
