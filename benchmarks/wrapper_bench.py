"""Does ``jitscope bench`` time the call the user makes on an ``equinox.filter_jit`` step?

An equinox MLP trained by SGD with a Python-float learning rate, under ``eqx.filter_jit`` (whose
own per-call work, splitting the arguments and hashing the static part, runs before the compiled
program on every call). In one process, back to back ``--pairs`` times (alternating which goes
first, so a pair sees one load level):

a. ``jitscope.bench(step, model, x, lr)``: its cached median (``cached.blocked``: the user's call),
   and the compiled program alone beside it (``cached.compiled``);
b. a hand-written blocking ``timeit`` of the user's own call,
   ``lambda: jax.block_until_ready(step(model, x, lr))``, sized by ``Timer.autorange``, the median
   of 5 repeats (bench reports a median too).

Printed: the ratio a/b (target: within 10% of 1; it was about 0.6 when bench timed a plain ``jit``
of the inner function), the ratio of the compiled program alone to b (how much of the user's call
the wrapper's own work is), and bench's own overhead figure.

    python benchmarks/wrapper_bench.py [--pairs 7] [--budget 0.3] [--width 64]
    python benchmarks/wrapper_bench.py --quick   # smoke run: --pairs 1 --budget 0.02
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import spread, watch_machine


def make_step(width: int) -> tuple[Any, tuple[Any, ...]]:
    """The user's step and one call's arguments: (model, batch, Python-float lr)."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    model = eqx.nn.MLP(32, 8, width_size=width, depth=2, key=jax.random.PRNGKey(0))
    x = jnp.ones((16, 32), jnp.float32)

    @eqx.filter_jit
    def step(model: Any, x: Any, lr: float) -> Any:
        grads = eqx.filter_grad(lambda m: jnp.mean(jax.vmap(m)(x) ** 2))(model)
        return eqx.apply_updates(model, jax.tree.map(lambda g: -lr * g, grads))

    return step, (model, x, 1e-3)


def hand_timed(step: Any, args: tuple[Any, ...]) -> float:
    """Seconds per call of the user's own call, blocked on every output leaf, as a careful user times it."""
    import jax

    def call() -> Any:
        return jax.block_until_ready(step(*args))

    call()
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    return statistics.median(t / number for t in timer.repeat(repeat=5, number=number))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--budget", type=float, default=0.3)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="smoke run: --pairs 1 --budget 0.02")
    opts = parser.parse_args()
    if opts.quick:
        opts.pairs, opts.budget = 1, 0.02

    import jitscope

    step, args = make_step(opts.width)
    with watch_machine(uses_jax=True) as machine:
        ratios, program_shares, overheads = [], [], []
        for pair in range(opts.pairs):
            first_bench = pair % 2 == 0
            hand = None if first_bench else hand_timed(step, args)
            result = jitscope.bench(step, *args, budget=opts.budget, dispatch=False)
            (row,) = result.rows
            hand = hand if hand is not None else hand_timed(step, args)
            machine.sample()
            cached = row.cached
            ratios.append(cached.blocked.median / hand)
            if cached.compiled is not None:
                program_shares.append(cached.compiled.median / hand)
                overheads.append(cached.wrapper_overhead or 0.0)
            print(f"pair {pair + 1}: bench {cached.blocked.median * 1e6:8.1f} µs ({cached.called or 'jit'}), "
                  f"compiled program alone "
                  f"{cached.compiled.median * 1e6 if cached.compiled else float('nan'):8.1f} µs, "
                  f"hand-written timeit {hand * 1e6:8.1f} µs", flush=True)
        print()
        print(f"bench cached median / timeit of the user's call: {spread(ratios, 'pairs')}  (target 0.9-1.1)")
        print(f"compiled program alone / timeit of the user's call: {spread(program_shares, 'pairs')}")
        if overheads:
            print(f"the wrapper's own per-call work (bench, paired rounds): median "
                  f"{statistics.median(overheads) * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
