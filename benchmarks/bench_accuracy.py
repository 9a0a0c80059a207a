"""Does ``jitscope bench`` measure what a careful hand-written loop measures?

1. Cached calls, for a dispatch-bound, a medium and a large function
   (examples/bench_workloads.py), against a hand-written ``timeit`` loop
   ``lambda: f(x).block_until_ready()``, in one process:

   a. end to end: ``bench_calls`` (what the CLI runs: warm-up, 1-2-5 calibration, rounds until
      the budget, GC off, every call blocked on its outputs) and ``timeit`` sized by
      ``Timer.autorange``, back to back ``--pairs`` times (alternating which goes first);
      the ratio is the median of the per-pair ratios (a pair sees one load level).
   b. interleaved: jitscope's timed round (``loops.blocked_round`` with the blocker and loop
      count jitscope chooses) and a ``timeit`` round of the same number of calls, alternating
      round by round ``--rounds`` times, so both see the same background load; ratio of medians.

   Target: within 5% of 1. Under each row: the spread of the per-pair (a) and per-round (b)
   ratios (median, min, max; IQR from 8 values). Also printed: jitscope's harness overhead per
   call (its timed loop around a call that returns a ready array) next to timeit's for the same
   loop.
2. Phase split: trace + lower + compile + first run (JAX monitoring events) against the cold
   call's wall time, for ``--cold-runs`` cold calls of each function; the events should
   account for at least 90% of the wall time.

    python benchmarks/bench_accuracy.py [--budget 0.2] [--pairs 9] [--rounds 60] [--cold-runs 5]
    python benchmarks/bench_accuracy.py --quick   # smoke run: --budget 0.02 --pairs 1 --rounds 4 --cold-runs 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import spread, watch_machine

from jitscope.timing.clock import perf_clock
from jitscope.timing.cold import measure_cold
from jitscope.timing.inputs import blocker_for, make_inputs
from jitscope.timing.loops import blocked_round
from jitscope.timing.plan import plan_calls
from jitscope.timing.runner import BenchOptions, bench_calls
from jitscope.jaxcompat.caches import persistent_cache

WORKLOADS = ("small", "medium", "large")


def timeit_median(fn: Callable[..., Any], args: Sequence[Any], budget: float) -> float:
    """The hand-written reference: timeit with block_until_ready, autorange-sized, median of repeats."""
    timer = timeit.Timer(lambda: fn(*args).block_until_ready())
    number, seconds = timer.autorange()  # >= 0.2 s per repeat, 1-2-5 ladder
    repeats = max(3, round(budget / max(seconds, 1e-9)))  # about as long as jitscope's side of the pair
    return statistics.median(t / number for t in timer.repeat(repeat=repeats, number=number))


def timeit_overhead(budget: float) -> float:
    import jax
    import numpy as np

    ready = jax.device_put(np.zeros((), np.float32)).block_until_ready()
    timer = timeit.Timer(lambda: ready.block_until_ready())
    number, _ = timer.autorange()
    return statistics.median(t / number for t in timer.repeat(repeat=5, number=number))


def cached_accuracy(budget: float, pairs: int, rounds: int) -> list[dict[str, Any]]:
    """Per workload: end-to-end medians (a) and interleaved-round medians (b), jitscope vs timeit."""
    import jax

    out = []
    for name in WORKLOADS:
        (call,) = plan_calls([f"{ROOT / 'examples' / 'bench_workloads.py'}:{name}"])
        target, argset = call
        args, _ = make_inputs(argset, seed=0)
        jitted = jax.jit(target.fn)  # jitscope: ignore[JS303] (one different function per workload)
        first = jitted(*args)
        first.block_until_ready()
        ours, theirs, loops, overhead = [], [], 1, 0.0
        for i in range(pairs):
            for side in ((0, 1) if i % 2 == 0 else (1, 0)):
                if side == 0:
                    report = bench_calls([call], BenchOptions(budget=budget, dispatch=False)).report
                    ours.append(report.rows[0].cached.blocked.median)
                    loops = report.rows[0].cached.blocked.loops
                    overhead = report.settings.harness_overhead or 0.0
                else:
                    theirs.append(timeit_median(jitted, args, budget))
        jitscope_round = blocked_round(jitted, args, {}, blocker_for(first), perf_clock)
        timer = timeit.Timer(lambda: jitted(*args).block_until_ready())  # noqa: B023 - used in this iteration
        ours_b, theirs_b = [], []
        for i in range(rounds):
            for side in ((0, 1) if i % 2 == 0 else (1, 0)):
                if side == 0:
                    ours_b.append(jitscope_round(loops) / loops)
                else:
                    theirs_b.append(timer.timeit(number=loops) / loops)
        a_ratios = [x / y for x, y in zip(ours, theirs, strict=True)]
        out.append({
            "label": f"{name}({argset.describe()})", "loops": loops, "overhead": overhead,
            "a": (statistics.median(ours), statistics.median(theirs)),
            "a_ratio": statistics.median(a_ratios),
            "a_ratios": a_ratios,
            "b": (statistics.median(ours_b), statistics.median(theirs_b)),
            "b_ratios": [x / y for x, y in zip(ours_b, theirs_b, strict=True)],
        })
    return out


def phase_split(cold_runs: int) -> list[tuple[str, float, float, list[float]]]:
    out = []
    with persistent_cache(None):
        for name in WORKLOADS:
            ((target, argset),) = plan_calls([f"{ROOT / 'examples' / 'bench_workloads.py'}:{name}"])
            args, kwargs = make_inputs(argset, seed=0)
            runs = [measure_cold(target.fn, target.options, args, kwargs, clock=perf_clock).run
                    for _ in range(cold_runs)]
            shares = [(r.total - (r.unattributed or 0.0)) / r.total for r in runs]
            out.append((name, statistics.median(r.total for r in runs),
                        statistics.median(r.total - (r.unattributed or 0.0) for r in runs), shares))
    return out


def fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.2f} µs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=0.2, help="seconds per measurement (each side)")
    parser.add_argument("--pairs", type=int, default=9, help="alternations of jitscope and timeit")
    parser.add_argument("--rounds", type=int, default=60, help="interleaved rounds per side")
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: --budget 0.02 --pairs 1 --rounds 4 --cold-runs 1")
    opts = parser.parse_args()
    if opts.quick:
        opts.budget, opts.pairs, opts.rounds, opts.cold_runs = 0.02, 1, 4, 1
    if min(opts.pairs, opts.rounds, opts.cold_runs) < 1:
        parser.error("--pairs, --rounds and --cold-runs must be at least 1")

    with watch_machine(uses_jax=True) as machine:
        report(opts, machine.sample)


def report(opts: argparse.Namespace, sample: Callable[[], None]) -> None:
    print(f"budget {opts.budget} s, {opts.pairs} pairs, {opts.rounds} interleaved rounds")
    print("\n1. cached call: jitscope vs hand-written timeit + block_until_ready (median per call)")
    print(f"{'':<40}{'a. end to end':^30}  {'b. interleaved rounds':^30}")
    print(f"{'function':<40}{'jitscope':>11}{'timeit':>11}{'ratio':>8}  {'jitscope':>11}{'timeit':>11}{'ratio':>8}"
          f"  loops  within 5%")
    worst = {"a": 0.0, "b": 0.0}
    overhead = 0.0
    checks = within = 0
    for r in cached_accuracy(opts.budget, opts.pairs, opts.rounds):
        sample()
        overhead = r["overhead"]
        cells = []
        ratios = {"a": r["a_ratio"], "b": r["b"][0] / r["b"][1]}
        for key in ("a", "b"):
            ours, theirs = r[key]
            worst[key] = max(worst[key], abs(ratios[key] - 1))
            cells.append(f"{fmt(ours):>11}{fmt(theirs):>11}{ratios[key]:>8.3f}")
            checks += 1
            within += abs(ratios[key] - 1) <= 0.05
        ok = "yes" if abs(ratios["b"] - 1) <= 0.05 else "NO"
        ok_a = "yes" if abs(ratios["a"] - 1) <= 0.05 else "NO"
        print(f"{r['label']:<40}{cells[0]}  {cells[1]}  {r['loops']:>5}  a: {ok_a}, b: {ok}")
        print(f"{'':<4}a: per-pair ratio {spread(r['a_ratios'], 'pairs')}; "
              f"b: per-round ratio {spread(r['b_ratios'], 'rounds')}")
    print(f"harness overhead per call: jitscope {overhead * 1e9:.0f} ns, timeit lambda + block_until_ready "
          f"{timeit_overhead(0.2) * 1e9:.0f} ns; worst |ratio - 1|: a {worst['a']:.1%}, b {worst['b']:.1%}")
    print(f"within 5% of timeit: {within} of {checks} checks")

    print(f"\n2. phase split: trace + lower + compile + first run vs cold-call wall time ({opts.cold_runs} runs)")
    print(f"{'function':<12}{'cold wall':>12}{'phases':>12}{'share':>8}  {'min share':>9}  >= 90%")
    for name, total, phases, shares in phase_split(opts.cold_runs):
        print(f"{name:<12}{total * 1e3:>10.2f}ms{phases * 1e3:>10.2f}ms{phases / total:>8.1%}  {min(shares):>9.1%}  "
              f"{'yes' if min(shares) >= 0.9 else 'NO'}")


if __name__ == "__main__":
    main()
