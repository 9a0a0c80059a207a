"""What ``--from-run`` adds before the captured call, and how long stopping the program takes.

The program builds its batches in plain Python (a Python-heavy data pipeline: the worst case for
a trace hook, since every Python call of the program passes through it) and runs ``--steps``
cached training steps, then calls the target once. It prints how long it took, by its own
clock, to get from the end of its imports to that call (``jitscope trace`` imports jax before the
program starts, so the imports themselves are left out for every contender). The same program runs, side by side in one run
(rounds alternate which goes first), under:

* ``python``: the baseline;
* ``jitscope run --log none``: what watching the whole program costs;
* ``jitscope trace prog.py:target --from-run --stages jaxpr``: the trap that waits for the call.

Ratios per round, against ``python``: ``run`` and ``from-run`` (the goal: ``from-run`` adds no more
than ``run`` does). Then ``stop``: the seconds from the moment the call is taken to the moment
the program has unwound and the command can start (measured in-process with
``jitscope.run.capture.capture_call``; the goal: well under a second).

    python benchmarks/from_run_overhead.py [--steps 300] [--rounds 5] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import spread, watch_machine

PROGRAM = '''
import sys
import time
import numpy as np
import jax
import jax.numpy as jnp
T0 = time.perf_counter()  # after the imports: jitscope trace has imported jax before the program starts


@jax.jit
def step(w, x):
    return w - 0.01 * jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)


@jax.jit
def target(w, x):
    return jnp.tanh(x @ w).sum()


def make_batch(i):  # plain Python: ~2,000 calls and a comprehension per batch
    rows = [[float((i * j + k) % 7) for k in range(32)] for j in range(64)]
    return np.asarray(rows, dtype=np.float32)


w = jnp.ones((32, 8)) * 0.1
for i in range(int(sys.argv[1])):
    w = step(w, make_batch(i))
jax.block_until_ready(w)
print(f"BEFORE {time.perf_counter() - T0:.6f}", file=sys.stderr, flush=True)
target(w, make_batch(0))
'''

STOP = '''
import sys, time
from jitscope.run.capture import capture_call
from jitscope.run.program import Program
result = capture_call(Program(sys.argv[1], None, (sys.argv[2],)), sys.argv[1], "target")
assert result.call is not None
print(f"STOP {result.wall_s - result.call.seconds:.6f}")
'''


def before_seconds(command: list[str]) -> float:
    env = {**os.environ, "NO_COLOR": "1", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    return next(float(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("BEFORE "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a smoke test: 20 steps, 1 round")
    options = parser.parse_args()
    steps, rounds = (20, 1) if options.quick else (options.steps, options.rounds)
    with tempfile.TemporaryDirectory() as tmp, watch_machine(uses_jax=True) as watch:
        program = Path(tmp) / "prog.py"
        program.write_text(PROGRAM)
        contenders = {
            "python": [sys.executable, str(program), str(steps)],
            "run": [sys.executable, "-m", "jitscope", "run", "--log", "none", str(program), str(steps)],
            "from-run": [sys.executable, "-m", "jitscope", "trace", f"{program}:target", "--from-run",
                         "--stages", "jaxpr", "--", str(steps)],
        }
        print(f"# program: {steps} cached steps, each batch built in plain Python; {rounds} rounds")
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for round_ in range(rounds):
            order = list(contenders) if round_ % 2 == 0 else list(reversed(contenders))
            for name in order:
                times[name].append(before_seconds(contenders[name]))
            watch.sample()
        stops = []
        for _ in range(rounds):
            out = subprocess.run([sys.executable, "-c", STOP, str(program), str(steps)], capture_output=True,
                                 text=True, check=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
            stops.append(next(float(line.split()[1]) for line in out.stdout.splitlines() if line.startswith("STOP ")))
        base = times["python"]
        print(f"python, to the call: median {statistics.median(base):.3f} s")
        for name in ("run", "from-run"):
            ratios = [t / b for t, b in zip(times[name], base, strict=True)]
            print(f"{name:9} / python, to the call: {spread(ratios, 'rounds')}")
        print(f"stop: from the taken call to the program unwound: median {statistics.median(stops) * 1000:.1f} ms "
              f"(max {max(stops) * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
